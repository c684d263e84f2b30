package agent

import (
	"context"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"

	"github.com/orca-project/orca/internal/cri/fakeruntime"
	"github.com/orca-project/orca/internal/kubelet/nodestatus"
)

func TestObserveRuntime(t *testing.T) {
	cases := []struct {
		name        string
		images      []string
		netReason   string
		wantNet     bool
		wantNetMsg  string
		wantImages  []string
		wantRuntime bool
	}{
		{"ready with images", []string{"busybox", "registry.local/app:v1"}, "", true, "", []string{"docker.io/library/busybox:latest", "registry.local/app:v1"}, true},
		{"network not ready", nil, "NetworkPluginNotReady", false, "NetworkReady=false reason:NetworkPluginNotReady message:cni config uninitialized", nil, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := fakeruntime.New()
			for _, img := range tc.images {
				rt.AddImage(img, 100)
			}
			rt.SetNetworkNotReady(tc.netReason, "cni config uninitialized")
			var m nodestatus.Machine
			observeRuntime(context.Background(), rt, &m)
			if m.RuntimeReady != tc.wantRuntime || m.NetworkReady != tc.wantNet || m.NetworkMessage != tc.wantNetMsg {
				t.Errorf("runtime ready %v network ready %v %q, want %v %v %q", m.RuntimeReady, m.NetworkReady, m.NetworkMessage, tc.wantRuntime, tc.wantNet, tc.wantNetMsg)
			}
			var names []string
			for _, img := range m.Images {
				if img.SizeBytes != 100 {
					t.Errorf("%v: size %d", img.Names, img.SizeBytes)
				}
				names = append(names, img.Names...)
			}
			sort.Strings(names)
			if strings.Join(names, " ") != strings.Join(tc.wantImages, " ") {
				t.Errorf("images %v, want %v", names, tc.wantImages)
			}
		})
	}
}

func TestImageVolumePullPolicy(t *testing.T) {
	const ref = "registry.local/data:v1"
	cases := []struct {
		name       string
		present    bool
		pullable   bool
		policy     v1.PullPolicy
		wantErr    string
		wantPulls  int
		wantEvents []string
	}{
		{"present, if not present", true, true, v1.PullIfNotPresent, "", 0,
			[]string{`Normal Pulled Image "registry.local/data:v1" already present on machine`}},
		{"absent, if not present", false, true, "", "", 1,
			[]string{`Normal Pulling Pulling image "registry.local/data:v1"`, `Normal Pulled Successfully pulled image "registry.local/data:v1"`}},
		{"present, always", true, true, v1.PullAlways, "", 1,
			[]string{`Normal Pulling Pulling image "registry.local/data:v1"`, `Normal Pulled Successfully pulled image`}},
		{"absent, never", false, true, v1.PullNever, `image "registry.local/data:v1" is not present with pull policy of Never`, 0, nil},
		{"absent, no registry has it", false, false, v1.PullIfNotPresent, `failed to pull image "registry.local/data:v1"`, 1,
			[]string{`Normal Pulling Pulling image`, `Warning Failed Failed to pull image "registry.local/data:v1"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := fakeruntime.New()
			if tc.present {
				rt.AddImage(ref, 10)
			}
			if tc.pullable {
				rt.AddRegistryImage(ref, 10)
			}
			events := record.NewFakeRecorder(10)
			iv := &imageVolumes{rt: rt, client: fake.NewClientset(), recorder: events}
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}
			id, err := iv.ensure(context.Background(), pod, &v1.ImageVolumeSource{Reference: ref, PullPolicy: tc.policy})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
			} else if err != nil || !strings.HasPrefix(id, "sha256:") {
				t.Fatalf("id %q error %v", id, err)
			}
			pulls := 0
			for _, c := range rt.Calls() {
				if c.Method == "PullImage" {
					pulls++
				}
			}
			if pulls != tc.wantPulls {
				t.Errorf("%d pulls, want %d", pulls, tc.wantPulls)
			}
			close(events.Events)
			var got []string
			for e := range events.Events {
				got = append(got, e)
			}
			if len(got) != len(tc.wantEvents) {
				t.Fatalf("events %q, want %q", got, tc.wantEvents)
			}
			for i, want := range tc.wantEvents {
				if !strings.HasPrefix(got[i], want) {
					t.Errorf("event %q, want %q", got[i], want)
				}
			}
		})
	}
}
