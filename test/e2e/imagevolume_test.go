package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An image volume shows an image's files read-only inside the container,
// and its mount and the runtime's hold on the layers go with the pod. An
// image that may not be pulled is reported as the volume's mount failure.
func TestImageVolume(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	p := simplePod(ns, "imgvol", "exec sleep 3600")
	p.Spec.Volumes = []v1.Volume{{Name: "img", VolumeSource: v1.VolumeSource{
		Image: &v1.ImageVolumeSource{Reference: busybox, PullPolicy: v1.PullIfNotPresent}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "img", MountPath: "/img"}}
	createPod(t, p)
	waitPod(t, ns, "imgvol", time.Minute, "Running", running)

	if out := kubectlOK(t, "", "exec", "-n", ns, "imgvol", "--", "ls", "/img/bin"); !strings.Contains(out, "busybox\n") {
		t.Errorf("ls /img/bin in the container:\n%s\nwant the image's busybox", out)
	}
	r := runKubectl(t, nil, "", "exec", "-n", ns, "imgvol", "--", "touch", "/img/new")
	if r.Code == 0 || !strings.Contains(r.Stderr, "Read-only file system") {
		t.Errorf("touch /img/new: exit %d, stderr %q; want a read-only file system", r.Code, r.Stderr)
	}
	if evs := events(t, ns, "imgvol"); !hasEvent(evs, `Pulled: Image "`+busybox+`" already present on machine`) {
		t.Errorf("events %q lack the image volume's Pulled event", evs)
	}

	// Never pulled and not present: the volume cannot be mounted.
	bad := simplePod(ns, "imgvol-missing", "exec sleep 3600")
	bad.Spec.Volumes = []v1.Volume{{Name: "img", VolumeSource: v1.VolumeSource{
		Image: &v1.ImageVolumeSource{Reference: "localhost/orca/absent:1.0", PullPolicy: v1.PullNever}}}}
	bad.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "img", MountPath: "/img"}}
	createPod(t, bad)
	eventually(t, time.Minute, func() error {
		want := `FailedMount: MountVolume.SetUp failed for volume "img" : image "localhost/orca/absent:1.0" is not present with pull policy of Never`
		if evs := events(t, ns, "imgvol-missing"); !hasEvent(evs, want) {
			return fmt.Errorf("events %q lack %q", evs, want)
		}
		return nil
	})
	if got := getPod(t, ns, "imgvol-missing"); got.Status.Phase != v1.PodPending {
		t.Errorf("pod with an unmountable image volume is %s, want Pending", got.Status.Phase)
	}

	// Deleting the pod releases the runtime's view of the image.
	sock := filepath.Join(nodeDir, "agent", "containerd", "containerd.sock")
	leases := func() string {
		out, err := exec.Command("ctr", "--address", sock, "-n", "k8s.io", "leases", "ls", "-q").CombinedOutput()
		if err != nil {
			t.Fatalf("ctr leases ls: %v: %s", err, out)
		}
		return string(out)
	}
	if l := leases(); !strings.Contains(l, "orca-image-volume-") {
		t.Errorf("no lease holds the mounted image volume; leases:\n%s", l)
	}
	if err := client.CoreV1().Pods(ns).Delete(context.Background(), "imgvol", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if l := leases(); strings.Contains(l, "orca-image-volume-") {
			return fmt.Errorf("leases of image volumes remain after the pod went:\n%s", l)
		}
		return nil
	})
}
