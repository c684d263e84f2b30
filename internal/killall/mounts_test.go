package killall

import (
	"slices"
	"testing"
)

const sampleMountinfo = `22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
100 30 0:50 / /var/lib/orca/agent/containerd/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs rw - overlay overlay rw
101 30 0:51 / /var/lib/orca/agent/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x rw - tmpfs tmpfs rw
102 30 0:52 / /run/netns/cni-1234 rw - nsfs nsfs rw
103 30 0:53 / /var/lib/orca/agent/containerd/state/io.containerd.grpc.v1.cri/sandboxes/abc/shm rw - tmpfs shm rw
104 101 0:54 / /var/lib/orca/agent/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x rw - tmpfs tmpfs rw
105 30 0:55 / /var/lib/orca2/x rw - tmpfs tmpfs rw
106 30 0:56 / /var/lib/orca rw - ext4 /dev/sdb1 rw
107 30 0:57 / /var/lib/orca/agent/pods/uid2/volumes/kubernetes.io~empty-dir/with\040space rw - tmpfs tmpfs rw
`

func TestUnmounts(t *testing.T) {
	points := ParseMountinfo(sampleMountinfo)
	if len(points) != 10 || points[9] != "/var/lib/orca/agent/pods/uid2/volumes/kubernetes.io~empty-dir/with space" {
		t.Fatalf("ParseMountinfo = %q", points)
	}
	got := Unmounts(points, "/var/lib/orca")
	want := []string{
		// Deepest first, then the latest mounted first.
		"/var/lib/orca/agent/containerd/state/io.containerd.grpc.v1.cri/sandboxes/abc/shm",
		"/var/lib/orca/agent/containerd/state/io.containerd.runtime.v2.task/k8s.io/abc/rootfs",
		"/var/lib/orca/agent/pods/uid2/volumes/kubernetes.io~empty-dir/with space",
		// Two stacked on one point: both go.
		"/var/lib/orca/agent/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x",
		"/var/lib/orca/agent/pods/uid1/volumes/kubernetes.io~projected/kube-api-access-x",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Unmounts =\n%q\nwant\n%q", got, want)
	}
	if got := Unmounts(points, "/srv/none"); len(got) != 0 {
		t.Errorf("nothing under /srv/none: %q", got)
	}
}
