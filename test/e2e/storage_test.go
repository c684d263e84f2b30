package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// claimPod is a busybox pod, placed by the scheduler, with claim mounted
// at /data.
func claimPod(ns, name, claim, script string) *v1.Pod {
	p := simplePod(ns, name, script)
	p.Spec.NodeName = ""
	p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "data", MountPath: "/data"}}
	return p
}

func newClaim(name string, size string, mutate ...func(*v1.PersistentVolumeClaim)) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeClaimSpec{
			AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:   v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}},
		},
	}
	for _, m := range mutate {
		m(c)
	}
	return c
}

func createClaim(t *testing.T, ns string, c *v1.PersistentVolumeClaim) *v1.PersistentVolumeClaim {
	t.Helper()
	out, err := client.CoreV1().PersistentVolumeClaims(ns).Create(context.Background(), c, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create claim %s: %v", c.Name, err)
	}
	return out
}

func waitClaim(t *testing.T, ns, name string, timeout time.Duration, what string, cond func(*v1.PersistentVolumeClaim) bool) *v1.PersistentVolumeClaim {
	t.Helper()
	var last *v1.PersistentVolumeClaim
	deadline := time.Now().Add(timeout)
	for {
		c, err := client.CoreV1().PersistentVolumeClaims(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = c
			if cond(c) {
				return c
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("claim %s/%s not %s after %v: %+v (events %q)", ns, name, what, timeout, last, events(t, ns, name))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func waitVolume(t *testing.T, name string, timeout time.Duration, what string, cond func(*v1.PersistentVolume, error) bool) {
	t.Helper()
	eventually(t, timeout, func() error {
		pv, err := client.CoreV1().PersistentVolumes().Get(context.Background(), name, metav1.GetOptions{})
		if cond(pv, err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("volume %s not %s: %v", name, what, err)
		}
		return fmt.Errorf("volume %s not %s: phase %s, claimRef %v, finalizers %v", name, what, pv.Status.Phase, pv.Spec.ClaimRef, pv.Finalizers)
	})
}

func bound(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimBound }

// TestLocalPathVolume follows a claim through the default class: it gets
// local-path, waits for its first consumer, is provisioned on the node
// the scheduler picked, keeps a pod's file across pods, is held while a
// pod uses it, and takes its directory with it when deleted.
func TestLocalPathVolume(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)

	c := createClaim(t, ns, newClaim("data", "64Mi"))
	if c.Spec.StorageClassName == nil || *c.Spec.StorageClassName != "local-path" {
		t.Fatalf("storageClassName = %v, want the default class local-path", c.Spec.StorageClassName)
	}
	if !strings.Contains(strings.Join(c.Finalizers, ","), "kubernetes.io/pvc-protection") {
		t.Errorf("finalizers %v, want kubernetes.io/pvc-protection", c.Finalizers)
	}
	eventually(t, 20*time.Second, func() error {
		if evs := events(t, ns, "data"); !hasEvent(evs, "WaitForFirstConsumer: waiting for first consumer to be created before binding") {
			return fmt.Errorf("events %q", evs)
		}
		return nil
	})
	if c := waitClaim(t, ns, "data", 5*time.Second, "Pending", func(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimPending }); c.Spec.VolumeName != "" {
		t.Fatalf("bound to %s before any pod used it", c.Spec.VolumeName)
	}

	// A non-root writer whose fsGroup owns what it writes.
	writer := claimPod(ns, "writer", "data", "echo kept > /data/file && exec sleep 3600")
	writer.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](2000)}
	createPod(t, writer)
	p := waitPod(t, ns, "writer", 2*time.Minute, "Running", running)
	c = waitClaim(t, ns, "data", 30*time.Second, "Bound", bound)
	if sel := c.Annotations["volume.kubernetes.io/selected-node"]; sel != p.Spec.NodeName {
		t.Errorf("selected-node %q, pod on %q", sel, p.Spec.NodeName)
	}
	if q := c.Status.Capacity[v1.ResourceStorage]; q.String() != "64Mi" {
		t.Errorf("capacity %s, want 64Mi", q.String())
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Name != "pvc-"+string(c.UID) || pv.Annotations["pv.kubernetes.io/provisioned-by"] != "orca.io/local-path" ||
		pv.Spec.PersistentVolumeReclaimPolicy != v1.PersistentVolumeReclaimDelete || pv.Spec.Local == nil || pv.Status.Phase != v1.VolumeBound {
		t.Fatalf("provisioned volume %+v", pv)
	}
	dir := pv.Spec.Local.Path
	if want := filepath.Join(nodeDir, "storage", pv.Name+"_"+ns+"_data"); dir != want {
		t.Errorf("path %s, want %s", dir, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "file")); err != nil || string(b) != "kept\n" {
		t.Fatalf("file on the node: %q %v", b, err)
	}
	if info, err := os.Stat(dir); err != nil || info.Sys().(*syscall.Stat_t).Gid != 2000 || info.Mode()&os.ModeSetgid == 0 {
		t.Errorf("volume directory %v %v: want group 2000 and setgid", info.Mode(), err)
	}
	out := kubectlOK(t, "", "get", "pvc", "data", "-n", ns)
	if !strings.Contains(out, "Bound") || !strings.Contains(out, pv.Name) || !strings.Contains(out, "local-path") || !strings.Contains(out, "RWO") {
		t.Errorf("kubectl get pvc:\n%s", out)
	}

	// The data outlives the pod.
	zero := int64(0)
	if err := client.CoreV1().Pods(ns).Delete(ctx, "writer", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		_, err := client.CoreV1().Pods(ns).Get(ctx, "writer", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("writer still there: %v", err)
	})
	createPod(t, claimPod(ns, "reader", "data", "cat /data/file; exec sleep 3600"))
	waitPod(t, ns, "reader", 2*time.Minute, "Running", running)
	eventually(t, 30*time.Second, func() error {
		if got := kubectlOK(t, "", "logs", "reader", "-n", ns); got != "kept\n" {
			return fmt.Errorf("reader logs %q", got)
		}
		return nil
	})

	// In use: deleting the claim leaves it Terminating until the pod goes.
	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	c = waitClaim(t, ns, "data", 5*time.Second, "Terminating", func(c *v1.PersistentVolumeClaim) bool { return c.DeletionTimestamp != nil })
	if out := kubectlOK(t, "", "get", "pvc", "data", "-n", ns); !strings.Contains(out, "Terminating") {
		t.Errorf("kubectl get pvc of a claim in use:\n%s", out)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("directory gone while the claim is in use: %v", err)
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, "reader", metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		_, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("claim still there: %v", err)
	})
	waitVolume(t, pv.Name, time.Minute, "deleted", func(_ *v1.PersistentVolume, err error) bool { return apierrors.IsNotFound(err) })
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory %s after the claim was deleted: %v", dir, err)
	}
}

// TestStaticVolumes: administrator-made volumes bound by upstream's rules:
// the smallest that fits, a selector, a reservation by claimRef, Retain
// leaving the volume Released with its data; and the claims that cannot
// bind, with upstream's events.
func TestStaticVolumes(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	manual := func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("manual-" + ns) }
	mkpv := func(name, size string, labels map[string]string, ref *v1.ObjectReference) string {
		name = ns + "-" + name
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "id"), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := client.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: v1.PersistentVolumeSpec{
				Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				StorageClassName:              "manual-" + ns,
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
				PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: dir}},
				ClaimRef:                      ref,
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
		return name
	}
	big := mkpv("big", "5Gi", map[string]string{"tier": "fast"}, nil)
	small := mkpv("small", "1Gi", nil, nil)
	medium := mkpv("medium", "2Gi", nil, nil)
	reserved := mkpv("reserved", "3Gi", nil, &v1.ObjectReference{Namespace: ns, Name: "wanted"})
	for _, name := range []string{big, small, medium, reserved} {
		waitVolume(t, name, 20*time.Second, "Available", func(pv *v1.PersistentVolume, err error) bool {
			return err == nil && pv.Status.Phase == v1.VolumeAvailable
		})
	}

	createClaim(t, ns, newClaim("fits", "500Mi", manual))
	createClaim(t, ns, newClaim("fast", "500Mi", manual, func(c *v1.PersistentVolumeClaim) {
		c.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}}
	}))
	createClaim(t, ns, newClaim("wanted", "100Mi", manual))
	for claim, want := range map[string]string{"fits": small, "fast": big, "wanted": reserved} {
		c := waitClaim(t, ns, claim, 30*time.Second, "Bound", bound)
		if c.Spec.VolumeName != want {
			t.Errorf("claim %s bound to %s, want %s", claim, c.Spec.VolumeName, want)
		}
		if c.Annotations["pv.kubernetes.io/bind-completed"] != "yes" {
			t.Errorf("claim %s annotations %v", claim, c.Annotations)
		}
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, small, metav1.GetOptions{})
	if err != nil || pv.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" || pv.Status.Phase != v1.VolumeBound {
		t.Fatalf("volume %s: %+v %v", small, pv, err)
	}
	if out := kubectlOK(t, "", "get", "pv", small); !strings.Contains(out, "Bound") || !strings.Contains(out, ns+"/fits") || !strings.Contains(out, "Retain") {
		t.Errorf("kubectl get pv:\n%s", out)
	}

	// Retain: the volume and its data stay, Released.
	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "fits", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVolume(t, small, 30*time.Second, "Released", func(pv *v1.PersistentVolume, err error) bool {
		return err == nil && pv.Status.Phase == v1.VolumeReleased
	})
	pv, _ = client.CoreV1().PersistentVolumes().Get(ctx, small, metav1.GetOptions{})
	if b, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "id")); err != nil || string(b) != small {
		t.Errorf("data of the released volume: %q %v", b, err)
	}
	// A Released volume is not given to a new claim.
	createClaim(t, ns, newClaim("later", "1Gi", manual))
	c := waitClaim(t, ns, "later", 30*time.Second, "Bound", bound)
	if c.Spec.VolumeName != medium {
		t.Errorf("claim later bound to %s, want %s (the released one is not reused)", c.Spec.VolumeName, medium)
	}

	// Claims that cannot bind stay Pending and say why.
	createClaim(t, ns, newClaim("noclass", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("no-such-class") }))
	createClaim(t, ns, newClaim("nothing", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("") }))
	for claim, want := range map[string]string{
		"noclass": `ProvisioningFailed: storageclass.storage.k8s.io "no-such-class" not found`,
		"nothing": "FailedBinding: no persistent volumes available for this claim and no storage class is set",
	} {
		eventually(t, 20*time.Second, func() error {
			if evs := events(t, ns, claim); !hasEvent(evs, want) {
				return fmt.Errorf("events of %s: %q", claim, evs)
			}
			return nil
		})
		if c := waitClaim(t, ns, claim, 5*time.Second, "Pending", func(c *v1.PersistentVolumeClaim) bool { return c.Status.Phase == v1.ClaimPending }); c.Spec.VolumeName != "" {
			t.Errorf("claim %s bound to %s", claim, c.Spec.VolumeName)
		}
	}
}

// TestStatefulSetVolumes: three replicas with claim templates across three
// nodes; each ordinal keeps its claim, node and data through a rolling
// update, and WhenScaled: Delete removes the claims of the ordinals that
// go.
func TestStatefulSetVolumes(t *testing.T) {
	nodes := needNodes(t, 3)
	ctx := context.Background()
	ns := namespace(t)
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3), ServiceName: "db",
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			PersistentVolumeClaimRetentionPolicy: &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
				WhenDeleted: appsv1.DeletePersistentVolumeClaimRetentionPolicyType, WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
			},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Tolerations:                   []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}},
					Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: v1.LabelHostname,
					}}}},
					Containers: []v1.Container{{
						Name: "main", Image: busybox, ImagePullPolicy: v1.PullNever,
						Env: []v1.EnvVar{{Name: "REV", Value: "1"}, {Name: "POD", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
						// The first pod of an ordinal writes its name; later
						// ones only read it.
						Command:      []string{"sh", "-c", "[ -f /data/id ] || echo $POD > /data/id; exec sleep 3600"},
						VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}},
					}},
				},
			},
			VolumeClaimTemplates: []v1.PersistentVolumeClaim{*newClaim("data", "32Mi")},
		},
	}
	if _, err := client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	placed := map[string]string{}
	for i := range 3 {
		name := fmt.Sprintf("db-%d", i)
		p := waitPod(t, ns, name, 3*time.Minute, "Running", running)
		placed[name] = p.Spec.NodeName
		waitClaim(t, ns, "data-"+name, 30*time.Second, "Bound", bound)
	}
	seen := map[string]bool{}
	for _, n := range placed {
		seen[n] = true
	}
	if len(seen) != 3 {
		t.Fatalf("pods placed on %v, want three nodes of %v", placed, nodes)
	}
	readID := func(pod string) string {
		var out string
		eventually(t, 30*time.Second, func() error {
			out = strings.TrimSpace(kubectlOK(t, "", "exec", pod, "-n", ns, "--", "cat", "/data/id"))
			if out == "" {
				return errors.New("no id yet")
			}
			return nil
		})
		return out
	}
	for pod := range placed {
		if id := readID(pod); id != pod {
			t.Errorf("%s reads id %q", pod, id)
		}
	}

	// Rolling update: each ordinal comes back on its volume's node, with
	// its data.
	before := map[string]string{}
	for pod := range placed {
		before[pod] = string(getPod(t, ns, pod).UID)
	}
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"REV","value":"2"}]}]}}}}`
	kubectlOK(t, "", "patch", "statefulset", "db", "-n", ns, "--type=strategic", "-p", patch)
	eventually(t, 4*time.Minute, func() error {
		for pod := range placed {
			p, err := client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err != nil || string(p.UID) == before[pod] || !running(p) || !ready(p) {
				return fmt.Errorf("%s not replaced and running yet", pod)
			}
		}
		return nil
	})
	for pod, node := range placed {
		p := getPod(t, ns, pod)
		if p.Spec.NodeName != node {
			t.Errorf("%s moved from %s to %s", pod, node, p.Spec.NodeName)
		}
		if id := readID(pod); id != pod {
			t.Errorf("%s reads id %q after the update", pod, id)
		}
	}

	// Scale down: the claims of the ordinals that go are deleted.
	kubectlOK(t, "", "scale", "statefulset", "db", "-n", ns, "--replicas=1")
	eventually(t, 2*time.Minute, func() error {
		for _, c := range []string{"data-db-1", "data-db-2"} {
			if _, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, c, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("claim %s still there: %v", c, err)
			}
		}
		return nil
	})
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-db-0", metav1.GetOptions{}); err != nil {
		t.Errorf("claim of the remaining ordinal: %v", err)
	}
}

// TestEphemeralVolume: a generic ephemeral volume's claim is made for the
// pod, named <pod>-<volume>, provisioned where the pod runs, and goes,
// with its volume and directory, when the pod goes.
func TestEphemeralVolume(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	p := simplePod(ns, "scratch", "echo here > /scratch/f && exec sleep 3600")
	p.Spec.NodeName = ""
	p.Spec.Volumes = []v1.Volume{{Name: "work", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{
		VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"kind": "scratch"}},
			Spec:       newClaim("", "16Mi").Spec,
		}}}}}
	p.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "work", MountPath: "/scratch"}}
	created := createPod(t, p)
	waitPod(t, ns, "scratch", 2*time.Minute, "Running", running)
	c := waitClaim(t, ns, "scratch-work", 30*time.Second, "Bound", bound)
	if !metav1.IsControlledBy(c, created) || c.Labels["kind"] != "scratch" || *c.Spec.StorageClassName != "local-path" {
		t.Errorf("claim %+v", c.ObjectMeta)
	}
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(pv.Spec.Local.Path, "f")); err != nil || string(b) != "here\n" {
		t.Errorf("file on the node: %q %v", b, err)
	}
	if err := client.CoreV1().Pods(ns).Delete(ctx, "scratch", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() error {
		if _, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "scratch-work", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("claim still there: %v", err)
		}
		return nil
	})
	waitVolume(t, pv.Name, time.Minute, "deleted", func(_ *v1.PersistentVolume, err error) bool { return apierrors.IsNotFound(err) })
	if _, err := os.Stat(pv.Spec.Local.Path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("directory after the pod went: %v", err)
	}
}

// TestVolumeExpansion: a bound local-path claim grows when its request
// does (the capacity is recorded, not enforced); a claim whose class does
// not allow expansion is refused with upstream's message.
func TestVolumeExpansion(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	createClaim(t, ns, newClaim("grow", "16Mi"))
	createPod(t, claimPod(ns, "user", "grow", "exec sleep 3600"))
	waitPod(t, ns, "user", 2*time.Minute, "Running", running)
	c := waitClaim(t, ns, "grow", 30*time.Second, "Bound", bound)
	kubectlOK(t, "", "patch", "pvc", "grow", "-n", ns, "-p", `{"spec":{"resources":{"requests":{"storage":"48Mi"}}}}`)
	c = waitClaim(t, ns, "grow", 30*time.Second, "resized", func(c *v1.PersistentVolumeClaim) bool {
		q := c.Status.Capacity[v1.ResourceStorage]
		for _, cond := range c.Status.Conditions {
			if cond.Type == v1.PersistentVolumeClaimResizing || cond.Type == v1.PersistentVolumeClaimFileSystemResizePending {
				return false
			}
		}
		return q.String() == "48Mi" && len(c.Status.AllocatedResourceStatuses) == 0
	})
	pv, err := client.CoreV1().PersistentVolumes().Get(ctx, c.Spec.VolumeName, metav1.GetOptions{})
	if q := pv.Spec.Capacity[v1.ResourceStorage]; err != nil || q.String() != "48Mi" {
		t.Errorf("volume capacity %s %v, want 48Mi", q.String(), err)
	}
	eventually(t, 20*time.Second, func() error {
		if evs := events(t, ns, "grow"); !hasEvent(evs, "VolumeResizeSuccessful") {
			return fmt.Errorf("events %q", evs)
		}
		return nil
	})

	// A hand-made volume of a class without allowVolumeExpansion.
	class := "fixed-" + ns
	name := ns + "-fixed"
	if _, err := client.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: t.TempDir()}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	createClaim(t, ns, newClaim("fixed", "1Gi", func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class }))
	waitClaim(t, ns, "fixed", 30*time.Second, "Bound", bound)
	r := runKubectl(t, nil, "", "patch", "pvc", "fixed", "-n", ns, "-p", `{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}`)
	if r.Code == 0 || !strings.Contains(r.Stderr, "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize") {
		t.Errorf("expanding a claim of a class without expansion: exit %d\n%s", r.Code, r.Stderr)
	}
}

// TestCraftedLocalPathVolume: a volume made by hand to look like a
// local-path one, pointing outside the node's storage directory, is
// neither mounted nor emptied by the node.
func TestCraftedLocalPathVolume(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "precious"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := createClaim(t, ns, newClaim("crafted", "16Mi"))
	name := "pvc-" + string(c.UID)
	_, err := client.CoreV1().PersistentVolumes().Create(ctx, &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels:      map[string]string{"orca.io/local-path-node": nodeName},
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "orca.io/local-path"},
			Finalizers:  []string{"orca.io/local-path-cleanup"}},
		Spec: v1.PersistentVolumeSpec{
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("16Mi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			StorageClassName:              "local-path",
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: outside}},
			ClaimRef:                      &v1.ObjectReference{Namespace: ns, Name: "crafted", UID: c.UID},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName}}},
			}}}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.CoreV1().PersistentVolumes().Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	waitClaim(t, ns, "crafted", 30*time.Second, "Bound", bound)
	createPod(t, claimPod(ns, "victim", "crafted", "ls /data; exec sleep 3600"))
	eventually(t, time.Minute, func() error {
		if evs := events(t, ns, "victim"); !hasEvent(evs, `FailedMount: MountVolume.SetUp failed for volume "data"`) ||
			!strings.Contains(strings.Join(evs, "\n"), "is not directly below the storage directory") {
			return fmt.Errorf("events %q", evs)
		}
		return nil
	})
	if p := getPod(t, ns, "victim"); running(p) {
		t.Fatal("a pod runs on a volume outside the storage directory")
	}
	// Released and deleted: the node refuses to empty it.
	if err := client.CoreV1().Pods(ns).Delete(ctx, "victim", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "crafted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitVolume(t, name, time.Minute, "being deleted", func(pv *v1.PersistentVolume, err error) bool { return err == nil && pv.DeletionTimestamp != nil })
	time.Sleep(3 * time.Second)
	if _, err := os.Stat(filepath.Join(outside, "precious")); err != nil {
		t.Errorf("the node removed a directory outside its storage: %v", err)
	}
}

// TestStorageQuota: claims are charged to the namespace's quota by
// count, by size and by class, the default class included, which the
// claim did not name.
func TestStorageQuota(t *testing.T) {
	needCluster(t)
	ctx := context.Background()
	ns := namespace(t)
	if _, err := client.CoreV1().ResourceQuotas(ns).Create(ctx, &v1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "storage"},
		Spec: v1.ResourceQuotaSpec{Hard: v1.ResourceList{
			"persistentvolumeclaims": resource.MustParse("3"),
			"requests.storage":       resource.MustParse("1Gi"),
			"local-path.storageclass.storage.k8s.io/requests.storage": resource.MustParse("100Mi"),
		}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, func() error {
		q, err := client.CoreV1().ResourceQuotas(ns).Get(ctx, "storage", metav1.GetOptions{})
		if err != nil || q.Status.Hard == nil {
			return fmt.Errorf("quota not computed yet: %v", err)
		}
		return nil
	})
	createClaim(t, ns, newClaim("first", "64Mi"))
	_, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, newClaim("second", "64Mi"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: storage, requested: local-path.storageclass.storage.k8s.io/requests.storage=64Mi, used: local-path.storageclass.storage.k8s.io/requests.storage=64Mi, limited: local-path.storageclass.storage.k8s.io/requests.storage=100Mi") {
		t.Errorf("second local-path claim over the class quota: %v", err)
	}
	other := func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = ptr.To("other") }
	createClaim(t, ns, newClaim("elsewhere", "512Mi", other))
	_, err = client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, newClaim("big", "600Mi", other), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota: storage, requested: requests.storage=600Mi, used: requests.storage=576Mi, limited: requests.storage=1Gi") {
		t.Errorf("claim over the size quota: %v", err)
	}
	createClaim(t, ns, newClaim("third", "16Mi", other))
	_, err = client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, newClaim("fourth", "16Mi", other), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "persistentvolumeclaims=1, used: persistentvolumeclaims=3, limited: persistentvolumeclaims=3") {
		t.Errorf("claim over the count: %v", err)
	}
}
