package fieldpath

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "1234",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"b": "say \"hi\"\n", "a": "1", "Example.com/Key": "x"},
		},
		Spec: v1.PodSpec{NodeName: "node-1", ServiceAccountName: "robot"},
		Status: v1.PodStatus{
			HostIP: "10.0.0.1", HostIPs: []v1.HostIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}},
			PodIP: "10.42.0.5", PodIPs: []v1.PodIP{{IP: "10.42.0.5"}, {IP: "fd42::5"}},
		},
	}
}

func TestExtractFieldPath(t *testing.T) {
	pod := testPod()
	tests := []struct {
		path    string
		want    string
		wantErr string
	}{
		{path: "metadata.name", want: "web"},
		{path: "metadata.namespace", want: "shop"},
		{path: "metadata.uid", want: "1234"},
		{path: "metadata.labels", want: "app=\"web\"\ntier=\"front\""},
		{path: "metadata.annotations", want: "Example.com/Key=\"x\"\na=\"1\"\nb=\"say \\\"hi\\\"\\n\""},
		{path: "metadata.labels['app']", want: "web"},
		{path: "metadata.labels['missing']", want: ""},
		{path: "metadata.annotations['Example.com/Key']", want: "x"},
		{path: "metadata.labels['bad key']", wantErr: "invalid key subscript in metadata.labels['bad key']"},
		{path: "metadata.name['x']", wantErr: `fieldPath "metadata.name['x']" does not support subscript`},
		{path: "spec.nodeName", want: "node-1"},
		{path: "spec.serviceAccountName", want: "robot"},
		{path: "status.hostIP", want: "10.0.0.1"},
		{path: "status.hostIPs", want: "10.0.0.1,fd00::1"},
		{path: "status.podIP", want: "10.42.0.5"},
		{path: "status.podIPs", want: "10.42.0.5,fd42::5"},
		{path: "spec.hostname", wantErr: "unsupported fieldPath: spec.hostname"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := ExtractFieldPath(pod, tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestExtractFieldPathSingleIPFields(t *testing.T) {
	// A pod whose status only has the singular fields still resolves the plural ones.
	pod := &v1.Pod{Status: v1.PodStatus{HostIP: "10.0.0.2", PodIP: "10.42.0.9"}}
	for path, want := range map[string]string{
		"status.hostIPs": "10.0.0.2", "status.podIPs": "10.42.0.9",
		"status.hostIP": "10.0.0.2", "status.podIP": "10.42.0.9",
	} {
		if got, err := ExtractFieldPath(pod, path); err != nil || got != want {
			t.Errorf("%s = %q, %v; want %q", path, got, err, want)
		}
	}
	empty := &v1.Pod{}
	if got, err := ExtractFieldPath(empty, "status.podIP"); err != nil || got != "" {
		t.Errorf("podIP of a pod without IPs = %q, %v", got, err)
	}
}

func TestExtractResourceValue(t *testing.T) {
	q := resource.MustParse
	container := &v1.Container{
		Name: "app",
		Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{
				v1.ResourceCPU: q("250m"), v1.ResourceMemory: q("64Mi"),
				v1.ResourceEphemeralStorage: q("1Gi"), "hugepages-2Mi": q("4Mi"),
			},
			Limits: v1.ResourceList{v1.ResourceCPU: q("1500m"), "hugepages-2Mi": q("4Mi")},
		},
	}
	node := v1.ResourceList{
		v1.ResourceCPU: q("4"), v1.ResourceMemory: q("8Gi"),
		v1.ResourceEphemeralStorage: q("100Gi"), "hugepages-2Mi": q("1Gi"),
	}
	tests := []struct {
		resource string
		divisor  string
		want     string
		wantErr  string
	}{
		{resource: "requests.cpu", want: "1"}, // 250m rounds up to one core
		{resource: "requests.cpu", divisor: "1m", want: "250"},
		{resource: "requests.cpu", divisor: "100m", want: "3"},
		{resource: "limits.cpu", want: "2"},
		{resource: "limits.cpu", divisor: "1m", want: "1500"},
		{resource: "requests.memory", want: "67108864"},
		{resource: "requests.memory", divisor: "1Mi", want: "64"},
		{resource: "requests.memory", divisor: "1Gi", want: "1"},
		{resource: "limits.memory", divisor: "1Mi", want: "8192"}, // unset: node allocatable
		{resource: "limits.ephemeral-storage", divisor: "1Gi", want: "100"},
		{resource: "requests.ephemeral-storage", divisor: "1Mi", want: "1024"},
		{resource: "requests.hugepages-2Mi", divisor: "1Mi", want: "4"},
		{resource: "limits.hugepages-2Mi", divisor: "1Mi", want: "4"},
		{resource: "limits.hugepages-1Gi", want: "0"}, // never filled from the node
		{resource: "limits.nvidia.com/gpu", wantErr: "unsupported container resource : limits.nvidia.com/gpu"},
		{resource: "cpu", wantErr: "unsupported container resource : cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.resource+"/"+tt.divisor, func(t *testing.T) {
			fs := &v1.ResourceFieldSelector{Resource: tt.resource}
			if tt.divisor != "" {
				fs.Divisor = q(tt.divisor)
			}
			got, err := ExtractResourceValue(fs, container, node)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	if _, ok := container.Resources.Limits[v1.ResourceMemory]; ok {
		t.Error("ExtractResourceValue changed the container's limits")
	}
}

func TestExtractResourceValueZeroLimitUsesNode(t *testing.T) {
	c := &v1.Container{Resources: v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("0")}}}
	got, err := ExtractResourceValue(&v1.ResourceFieldSelector{Resource: "limits.cpu"}, c, v1.ResourceList{v1.ResourceCPU: resource.MustParse("3")})
	if err != nil || got != "3" {
		t.Fatalf("got %q, %v; want 3", got, err)
	}
}

func TestFindContainer(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init"}},
		Containers:     []v1.Container{{Name: "app"}},
	}}
	for _, name := range []string{"init", "app"} {
		if c, err := FindContainer(pod, name); err != nil || c.Name != name {
			t.Errorf("FindContainer(%s) = %v, %v", name, c, err)
		}
	}
	if _, err := FindContainer(pod, "nope"); err == nil || err.Error() != "container nope not found" {
		t.Errorf("err = %v", err)
	}
}
