package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const csiDriverName = "hostpath.csi.orca.test"

// startCSI builds and starts, on the test node, the test's host-path
// CSI driver (which registers itself as node-driver-registrar would) and
// upstream's external-provisioner and external-attacher, built from their
// Go modules (test/csi/provisioner, test/csi/attacher). It returns the
// driver's data directory.
func startCSI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(workDir, "csi-bin")
	build := func(dir string, pkgs ...string) {
		cmd := exec.Command("go", append([]string{"build", "-o", bin + "/"}, pkgs...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %v: %v\n%s", pkgs, err, out)
		}
	}
	root := repoRoot(t)
	build(root, "github.com/orca-project/orca/test/csi/hostpath")
	// Each sidecar is a module of its own: their dependencies differ.
	build(filepath.Join(root, "test", "csi", "provisioner"), "github.com/kubernetes-csi/external-provisioner/v5/cmd/csi-provisioner")
	build(filepath.Join(root, "test", "csi", "attacher"), "github.com/kubernetes-csi/external-attacher/v4/cmd/csi-attacher")

	agentDir := filepath.Join(nodeDir, "agent")
	socket := filepath.Join(agentDir, "plugins", csiDriverName, "csi.sock")
	data := filepath.Join(workDir, "csi-data")
	start := func(name string, args ...string) {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		logf, err := os.Create(filepath.Join(workDir, name+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_, _ = cmd.Process.Wait()
			_ = logf.Close()
			if t.Failed() {
				b, _ := os.ReadFile(logf.Name())
				t.Logf("--- %s log\n%s", name, tail(string(b), 30))
			}
		})
	}
	start("hostpath", "--endpoint", socket, "--registration-dir", filepath.Join(agentDir, "plugins_registry"),
		"--node-id", nodeName, "--data-dir", data)
	start("csi-provisioner", "--csi-address", socket, "--kubeconfig", inst.Kubeconfig, "--v", "2")
	start("csi-attacher", "--csi-address", socket, "--kubeconfig", inst.Kubeconfig, "--v", "2")
	return data
}

// repoRoot is the repository's root: go test runs in the package's
// directory, test/e2e.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module github.com/orca-project/orca\n") {
		t.Fatalf("%s is not the repository's root: %v", root, err)
	}
	return root
}

// TestCSIDriver runs a CSI driver through the kubelet as upstream's would
// run: it registers and lands in the node's CSINode; a claim of its class
// is provisioned by upstream's external-provisioner; a pod's use attaches
// it (a VolumeAttachment the external-attacher marks attached), stages and
// publishes it; the data outlives the pod; the pod's going detaches and
// unstages it; deleting the claim deletes the volume. An inline ephemeral
// volume gets the pod's information and goes with the pod.
func TestCSIDriver(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	if _, err := client.StorageV1().CSIDrivers().Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: csiDriverName},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired: ptr.To(true), PodInfoOnMount: ptr.To(true),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent, storagev1.VolumeLifecycleEphemeral},
			FSGroupPolicy:        ptr.To(storagev1.FileFSGroupPolicy),
		},
	}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.StorageV1().CSIDrivers().Delete(context.Background(), csiDriverName, metav1.DeleteOptions{})
	})
	data := startCSI(t)

	eventually(t, time.Minute, func() error {
		cn, err := client.StorageV1().CSINodes().Get(ctx, nodeName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, d := range cn.Spec.Drivers {
			if d.Name == csiDriverName && d.NodeID == nodeName && len(d.TopologyKeys) == 1 && d.Allocatable != nil && *d.Allocatable.Count == 100 {
				return nil
			}
		}
		return fmt.Errorf("CSINode drivers %+v", cn.Spec.Drivers)
	})
	node, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids map[string]string
	if err := json.Unmarshal([]byte(node.Annotations["csi.volume.kubernetes.io/nodeid"]), &ids); err != nil || ids[csiDriverName] != nodeName {
		t.Errorf("node ID annotation %q: %v", node.Annotations["csi.volume.kubernetes.io/nodeid"], err)
	}
	if node.Labels["topology.hostpath.csi.orca.test/node"] != nodeName {
		t.Errorf("topology label missing: %v", node.Labels)
	}

	class := "csi-" + ns
	if _, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: class}, Provisioner: csiDriverName,
		ReclaimPolicy: ptr.To(v1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{})
	})
	createClaim(t, ns, newClaim("csi", "32Mi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class }))
	c := waitClaim(t, ns, "csi", 2*time.Minute, "Bound", bound)
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.CSI == nil || pv.Spec.CSI.Driver != csiDriverName || pv.Annotations["pv.kubernetes.io/provisioned-by"] != csiDriverName {
		t.Fatalf("provisioned volume %+v %v", pv, err)
	}
	volDir := filepath.Join(data, pv.Spec.CSI.VolumeHandle)
	if _, err := os.Stat(volDir); err != nil {
		t.Fatalf("the driver made no directory: %v", err)
	}

	writer := claimPod(ns, "writer", "csi", "echo csi > /data/file && exec sleep 3600")
	writer.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: ptr.To[int64](3000)}
	createPod(t, writer)
	waitPod(t, ns, "writer", 2*time.Minute, "Running", running)
	vaName := attachmentOf(t, pv.Name)
	va, err := client.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{})
	if err != nil || !va.Status.Attached || va.Spec.Attacher != csiDriverName || va.Spec.NodeName != nodeName {
		t.Fatalf("attachment %+v %v", va, err)
	}
	if b, err := os.ReadFile(filepath.Join(volDir, "file")); err != nil || string(b) != "csi\n" {
		t.Fatalf("file in the driver's directory: %q %v", b, err)
	}
	if info, err := os.Stat(filepath.Join(volDir, "file")); err != nil || info.Sys().(*syscall.Stat_t).Gid != 3000 {
		t.Errorf("file group under fsGroupPolicy File: %v", err)
	}

	zero := ptr.To[int64](0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, "writer", metav1.DeleteOptions{GracePeriodSeconds: zero}); err != nil {
		t.Fatal(err)
	}
	createPod(t, claimPod(ns, "reader", "csi", "cat /data/file; exec sleep 3600"))
	waitPod(t, ns, "reader", 2*time.Minute, "Running", running)
	eventually(t, 30*time.Second, func() error {
		if got := kubectlOK(t, "", "logs", "reader", "-n", ns); got != "csi\n" {
			return fmt.Errorf("reader logs %q", got)
		}
		return nil
	})
	if err := client.CoreV1().Pods(ns).Delete(ctx, "reader", metav1.DeleteOptions{GracePeriodSeconds: zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if _, err := client.StorageV1().VolumeAttachments().Get(ctx, vaName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("attachment still there: %v", err)
		}
		return nil
	})
	staged, _ := filepath.Glob(filepath.Join(nodeDir, "agent", "plugins", "kubernetes.io", "csi", csiDriverName, "*", "globalmount"))
	for _, s := range staged {
		if m, _ := mountedAt(s); m {
			t.Errorf("volume still staged at %s after its last pod went", s)
		}
	}
	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "csi", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVolume(t, pv.Name, time.Minute, "deleted", func(_ *v1.PersistentVolume, err error) bool { return apierrors.IsNotFound(err) })
	if _, err := os.Stat(volDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the driver's directory after the claim went: %v", err)
	}

	// An inline ephemeral volume, with the pod's information.
	p := simplePod(ns, "inline", "cat /data/attributes; echo; exec sleep 3600")
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{
		Driver: csiDriverName, VolumeAttributes: map[string]string{"greeting": "hello"}}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	created := createPod(t, p)
	waitPod(t, ns, "inline", 2*time.Minute, "Running", running)
	eventually(t, 30*time.Second, func() error {
		if got := kubectlOK(t, "", "logs", "inline", "-n", ns); got != "hello inline\n" {
			return fmt.Errorf("inline logs %q", got)
		}
		return nil
	})
	inlineDirs, _ := filepath.Glob(filepath.Join(data, "csi-*"))
	if len(inlineDirs) != 1 {
		t.Fatalf("inline volume directories %v", inlineDirs)
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, "inline", metav1.DeleteOptions{GracePeriodSeconds: zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if _, err := os.Stat(inlineDirs[0]); !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("inline volume of pod %s still there: %v", created.UID, err)
		}
		return nil
	})
}

// attachmentOf finds the VolumeAttachment of a volume on the test node.
func attachmentOf(t *testing.T, pv string) string {
	t.Helper()
	var name string
	eventually(t, time.Minute, func() error {
		vas, err := client.StorageV1().VolumeAttachments().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, va := range vas.Items {
			if va.Spec.Source.PersistentVolumeName != nil && *va.Spec.Source.PersistentVolumeName == pv && va.Spec.NodeName == nodeName {
				name = va.Name
				return nil
			}
		}
		return fmt.Errorf("no attachment of %s", pv)
	})
	return name
}

func mountedAt(dir string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && f[4] == dir {
			return true, nil
		}
	}
	return false, nil
}
