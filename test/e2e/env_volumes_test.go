package e2e

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEnvFromConfigMapSecretAndDownwardAPI(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"},
		Data: map[string]string{"COLOR": "blue", "SIZE": "large"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "creds"},
		Data: map[string][]byte{"password": []byte("s3cret")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := simplePod(ns, "envy", "env | sort; exec sleep 3600")
	c := &p.Spec.Containers[0]
	c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	c.EnvFrom = []v1.EnvFromSource{{Prefix: "CFG_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}}}}
	c.Env = []v1.EnvVar{
		{Name: "PLAIN", Value: "value"},
		{Name: "EXPANDED", Value: "$(PLAIN)-and-$(CFG_COLOR)"},
		{Name: "FROM_CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}, Key: "SIZE"}}},
		{Name: "FROM_SECRET", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
		{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_IP", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "MEM_MI", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
	}
	createPod(t, p)
	got := waitPod(t, ns, "envy", time.Minute, "Running", running)
	var out string
	eventually(t, 10*time.Second, func() error {
		out = kubectlOK(t, "", "logs", "envy", "-n", ns)
		if !strings.Contains(out, "PLAIN=") {
			return fmt.Errorf("no env yet: %q", out)
		}
		return nil
	})
	for _, want := range []string{
		"CFG_COLOR=blue", "CFG_SIZE=large", "PLAIN=value", "EXPANDED=value-and-blue", "FROM_CM=large",
		"FROM_SECRET=s3cret", "POD_NAME=envy", "POD_IP=" + got.Status.PodIP, "NODE=" + nodeName, "MEM_MI=64",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("env lacks %s:\n%s", want, out)
		}
	}

	// A missing key is a configuration error, shown as upstream shows it.
	bad := simplePod(ns, "missing-key", "sleep 3600")
	bad.Spec.Containers[0].Env = []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "settings"}, Key: "NOPE"}}}}
	createPod(t, bad)
	waitPod(t, ns, "missing-key", time.Minute, "CreateContainerConfigError", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CreateContainerConfigError" &&
			cs.State.Waiting.Message == "couldn't find key NOPE in ConfigMap "+ns+"/settings"
	})
}

func TestVolumesAreVisibleInTheContainer(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	if _, err := client.CoreV1().ConfigMaps(ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Data: map[string]string{"index.html": "version 1", "other": "x"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls"},
		Data: map[string][]byte{"key": []byte("private")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hostDir := t.TempDir()
	pvDir := t.TempDir()
	if err := writeFile(pvDir+"/data.txt", "from the persistent volume\n"); err != nil {
		t.Fatal(err)
	}
	pvName := ns + "-pv"
	claim, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim"},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, VolumeName: pvName,
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: pvDir}},
			ClaimRef:                      &v1.ObjectReference{Namespace: ns, Name: "claim", UID: claim.UID},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
		}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	// The volume controller binds the pair the test reserved for each other.
	waitClaim(t, ns, "claim", 30*time.Second, "Bound", bound)

	mode := int32(0o400)
	dirOrCreate := v1.HostPathDirectoryOrCreate
	p := simplePod(ns, "volumes", "exec sleep 3600")
	p.Labels = map[string]string{"tier": "front"}
	p.Spec.Volumes = []v1.Volume{
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "ram", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory}}},
		{Name: "host", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: hostDir + "/made", Type: &dirOrCreate}}},
		{Name: "config", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "web"},
			Items: []v1.KeyToPath{{Key: "index.html", Path: "site/index.html"}}}}},
		{Name: "secret", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "tls", DefaultMode: &mode}}},
		{Name: "podinfo", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		}}}},
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim"}}},
	}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "scratch", MountPath: "/scratch"}, {Name: "ram", MountPath: "/ram"}, {Name: "host", MountPath: "/host"},
		{Name: "config", MountPath: "/config"}, {Name: "secret", MountPath: "/secret"}, {Name: "podinfo", MountPath: "/podinfo"},
		{Name: "data", MountPath: "/data"},
	}
	createPod(t, p)
	waitPod(t, ns, "volumes", time.Minute, "Running", running)
	exec := func(script string) string {
		return kubectlOK(t, "", "exec", "volumes", "-n", ns, "--", "sh", "-c", script)
	}
	checks := []struct{ script, want string }{
		{"echo hi > /scratch/f && cat /scratch/f", "hi\n"},
		{"grep ' /ram ' /proc/mounts | cut -d' ' -f3", "tmpfs\n"},
		{"echo from-pod > /host/f && cat /host/f", "from-pod\n"},
		{"cat /config/site/index.html", "version 1"},
		{"ls /config", "site\n"},
		{"cat /secret/key; stat -L -c ' %a' /secret/key", "private 400\n"},
		{"cat /podinfo/labels; echo; cat /podinfo/name", "tier=\"front\"\nvolumes"},
		{"cat /data/data.txt", "from the persistent volume\n"},
		{"cat /var/run/secrets/kubernetes.io/serviceaccount/namespace", ns},
		{"test -s /var/run/secrets/kubernetes.io/serviceaccount/token && grep -c BEGIN /var/run/secrets/kubernetes.io/serviceaccount/ca.crt", "1\n"},
	}
	for _, c := range checks {
		if got := exec(c.script); got != c.want {
			t.Errorf("%s: got %q, want %q", c.script, got, c.want)
		}
	}
	if b, err := readFile(hostDir + "/made/f"); err != nil || b != "from-pod\n" {
		t.Errorf("hostPath write not visible on the host: %q %v", b, err)
	}

	// A ConfigMap update reaches the running pod within a minute.
	cm, err := client.CoreV1().ConfigMaps(ns).Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm.Data["index.html"] = "version 2"
	if _, err := client.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if got := exec("cat /config/site/index.html"); got != "version 2" {
			return fmt.Errorf("still %q", got)
		}
		return nil
	})
}

func TestMissingConfigMapVolumeIsReported(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "nomap", "sleep 3600")
	p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}
	createPod(t, p)
	eventually(t, 30*time.Second, func() error {
		if evs := events(t, ns, "nomap"); !hasEvent(evs, `FailedMount: MountVolume.SetUp failed for volume "cfg" : configmap "absent" not found`) {
			return fmt.Errorf("events %v", evs)
		}
		return nil
	})
	if got := getPod(t, ns, "nomap"); got.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", got.Status.Phase)
	}
}

func TestImagePullFailureBacksOff(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	// A registry address on this machine where nothing listens: the pull
	// fails at once and nothing leaves the machine.
	p := simplePod(ns, "nopull", "sleep 3600")
	p.Spec.Containers[0].Image = "127.0.0.1:5999/absent/image:1"
	p.Spec.Containers[0].ImagePullPolicy = v1.PullAlways
	// Every state the kubelet stores is watched: ErrImagePull lasts only
	// until the next sync, which a poll can miss.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := client.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=nopull"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	createPod(t, p)
	// The pull fails, backs off, and is tried again after the back-off
	// (10 s), failing again: as upstream, the reasons alternate.
	want := []string{"ErrImagePull", "ImagePullBackOff", "ErrImagePull"}
	var reasons []string
	for len(reasons) < len(want) {
		ev, ok := <-w.ResultChan()
		if !ok {
			t.Fatalf("waiting reasons %v after a minute, want %v first; status: %s", reasons, want, describeStatus(getPod(t, ns, "nopull")))
		}
		pod, isPod := ev.Object.(*v1.Pod)
		if !isPod {
			continue
		}
		if cs := containerStatus(pod, "main"); cs != nil && cs.State.Waiting != nil && strings.Contains(cs.State.Waiting.Reason, "ImagePull") {
			if r := cs.State.Waiting.Reason; len(reasons) == 0 || reasons[len(reasons)-1] != r {
				reasons = append(reasons, r)
			}
		}
	}
	if !reflect.DeepEqual(reasons, want) {
		t.Errorf("waiting reasons %v, want %v", reasons, want)
	}
	out := kubectlOK(t, "", "get", "pod", "nopull", "-n", ns)
	if !strings.Contains(out, "ImagePullBackOff") && !strings.Contains(out, "ErrImagePull") {
		t.Errorf("kubectl get pod:\n%s", out)
	}
	eventually(t, 10*time.Second, func() error {
		evs := events(t, ns, "nopull")
		if !hasEvent(evs, `Pulling: Pulling image "127.0.0.1:5999/absent/image:1"`) || !hasEvent(evs, `Failed: Failed to pull image "127.0.0.1:5999/absent/image:1"`) {
			return fmt.Errorf("events %v", evs)
		}
		return nil
	})

	never := simplePod(ns, "neverpull", "sleep 3600")
	never.Spec.Containers[0].Image = "localhost/orca/not-imported:1"
	createPod(t, never)
	waitPod(t, ns, "neverpull", 30*time.Second, "ErrImageNeverPull", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil && cs.State.Waiting.Reason == "ErrImageNeverPull" &&
			cs.State.Waiting.Message == `Container image "localhost/orca/not-imported:1" is not present with pull policy of Never`
	})
}
