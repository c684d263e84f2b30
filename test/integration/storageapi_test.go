package integration

import (
	"context"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
)

// TestStorageAPI: the storage.k8s.io/v1 resources that describe CSI
// drivers, written and read with client-go and listed with kubectl:
// upstream's defaults, validation messages, immutable fields, status
// subresources and `kubectl get` columns.
func TestStorageAPI(t *testing.T) {
	out := mustKubectl(t, "", "api-resources", "--api-group=storage.k8s.io", "--no-headers")
	for _, want := range []string{
		"csidrivers storage.k8s.io/v1 false CSIDriver",
		"csinodes storage.k8s.io/v1 false CSINode",
		"csistoragecapacities storage.k8s.io/v1 true CSIStorageCapacity",
		"storageclasses sc storage.k8s.io/v1 false StorageClass",
		"volumeattachments storage.k8s.io/v1 false VolumeAttachment",
		"volumeattributesclasses vac storage.k8s.io/v1 false VolumeAttributesClass",
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			found = found || strings.Join(strings.Fields(line), " ") == want
		}
		if !found {
			t.Errorf("api-resources lacks %q:\n%s", want, out)
		}
	}
	t.Run("CSIDriver", testCSIDrivers)
	t.Run("CSINode", testCSINodes)
	t.Run("CSIStorageCapacity", testCSIStorageCapacities)
	t.Run("VolumeAttachment", testVolumeAttachments)
	t.Run("VolumeAttributesClass", testVolumeAttributesClasses)
}

// wantInvalid fails unless err is a 422 with exactly msg.
func wantInvalid(t *testing.T, what string, err error, msg string) {
	t.Helper()
	if !apierrors.IsInvalid(err) || err.Error() != msg {
		t.Errorf("%s: %v\nwant 422: %s", what, err, msg)
	}
}

func testCSIDrivers(t *testing.T) {
	ctx := context.Background()
	drivers := client.StorageV1().CSIDrivers()
	name := "csi-" + utilrand.String(5) + ".example.com"
	t.Cleanup(func() { _ = drivers.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	d, err := drivers.Create(ctx, &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := d.Spec
	if !*s.AttachRequired || *s.PodInfoOnMount || *s.StorageCapacity || *s.RequiresRepublish || *s.SELinuxMount ||
		*s.PreventPodSchedulingIfMissing || *s.FSGroupPolicy != storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy ||
		len(s.VolumeLifecycleModes) != 1 || s.VolumeLifecycleModes[0] != storagev1.VolumeLifecyclePersistent {
		t.Errorf("defaults: %+v", s)
	}
	if d.Generation != 0 {
		t.Errorf("generation %d on create, want 0 as upstream", d.Generation)
	}

	d.Spec.PodInfoOnMount = ptr.To(true)
	d.Spec.TokenRequests = []storagev1.TokenRequest{{Audience: "vault"}}
	if d, err = drivers.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if d.Generation != 1 {
		t.Errorf("generation %d after a spec change, want 1", d.Generation)
	}
	got, err := drivers.Get(ctx, name, metav1.GetOptions{})
	if err != nil || !*got.Spec.PodInfoOnMount || len(got.Spec.TokenRequests) != 1 {
		t.Errorf("read back %+v (%v)", got, err)
	}

	bad := d.DeepCopy()
	bad.Spec.AttachRequired = ptr.To(false)
	_, err = drivers.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "attachRequired changed", err, `CSIDriver.storage.k8s.io "`+name+`" is invalid: spec.attachedRequired: Invalid value: false: field is immutable`)
	bad = d.DeepCopy()
	bad.Spec.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecycleEphemeral}
	_, err = drivers.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "modes changed", err, `CSIDriver.storage.k8s.io "`+name+`" is invalid: spec.volumeLifecycleModes: Invalid value: ["Ephemeral"]: field is immutable`)

	_, err = drivers.Create(ctx, &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-" + name},
		Spec: storagev1.CSIDriverSpec{
			FSGroupPolicy:        ptr.To[storagev1.FSGroupPolicy]("Sometimes"),
			TokenRequests:        []storagev1.TokenRequest{{Audience: "a", ExpirationSeconds: ptr.To[int64](60)}, {Audience: "a"}},
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{"Transient"},
		},
	}, metav1.CreateOptions{})
	wantInvalid(t, "bad driver", err, `CSIDriver.storage.k8s.io "bad-`+name+`" is invalid: [`+
		`spec.fsGroupPolicy: Unsupported value: "Sometimes": supported values: "File", "None", "ReadWriteOnceWithFSType", `+
		`spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes, `+
		`spec.tokenRequests[1].audience: Duplicate value: "a", `+
		`spec.volumeLifecycleModes: Unsupported value: "Transient": supported values: "Persistent", "Ephemeral"]`)

	list, err := drivers.List(ctx, metav1.ListOptions{})
	if err != nil || !listed(len(list.Items), func(i int) string { return list.Items[i].Name }, name) {
		t.Errorf("list lacks %s (%v)", name, err)
	}

	out := mustKubectl(t, "", "get", "csidrivers")
	if h := header(out); h != "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE" {
		t.Errorf("header %q", h)
	}
	if row := tableRow(t, out, name); strings.Join(row[1:7], " ") != "true true false vault false Persistent" {
		t.Errorf("row %q", row)
	}
}

func testCSINodes(t *testing.T) {
	ctx := context.Background()
	nodes := client.StorageV1().CSINodes()
	name := "csinode-" + utilrand.String(5)
	other := name + "-other"
	t.Cleanup(func() {
		for _, n := range []string{name, other} {
			_ = nodes.Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	csiNode := func(name string, drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
	}
	ebs := storagev1.CSINodeDriver{Name: "ebs.csi.aws.com", NodeID: "i-0123", TopologyKeys: []string{"topology.ebs.csi.aws.com/zone"},
		Allocatable: &storagev1.VolumeNodeResources{Count: ptr.To[int32](25)}}
	nfs := storagev1.CSINodeDriver{Name: "nfs.csi.k8s.io", NodeID: name}

	// A node registers its drivers itself, in its own CSINode only.
	kubelet := certClient(t, "system:node:"+name, "system:nodes").StorageV1().CSINodes()
	n, err := kubelet.Create(ctx, csiNode(name, ebs), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("node creates its CSINode: %v", err)
	}
	_, err = kubelet.Create(ctx, csiNode(other), metav1.CreateOptions{})
	forbidden(t, "node creates another's CSINode", err, "can only access CSINode with the same name as the requesting node")
	if _, err := nodes.Create(ctx, csiNode(other, nfs), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = kubelet.Get(ctx, other, metav1.GetOptions{})
	forbidden(t, "node reads another's CSINode", err, `User "system:node:`+name+`" cannot get resource "csinodes" in API group "storage.k8s.io" at the cluster scope: can only access CSINode with the same name as the requesting node`)
	_, err = kubelet.List(ctx, metav1.ListOptions{})
	forbidden(t, "node lists CSINodes", err, "can only get, create, update, patch, or delete a CSINode")

	n.Spec.Drivers = append(n.Spec.Drivers, nfs)
	n.Spec.Drivers[0].Allocatable.Count = ptr.To[int32](39)
	if n, err = kubelet.Update(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node adds a driver and changes a count: %v", err)
	}

	bad := n.DeepCopy()
	bad.Spec.Drivers[0].NodeID = "i-4567"
	_, err = nodes.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "node ID changed", err, `CSINode.storage.k8s.io "`+name+`" is invalid: spec.drivers: Invalid value: `+
		`{"Name":"ebs.csi.aws.com","NodeID":"i-4567","TopologyKeys":["topology.ebs.csi.aws.com/zone"],"Allocatable":null}: field is immutable`)
	bad = n.DeepCopy()
	bad.Spec.Drivers[1].Name = ebs.Name
	bad.Spec.Drivers[1].NodeID = ""
	_, err = nodes.Update(ctx, bad, metav1.UpdateOptions{})
	// The second entry also differs from the registered driver of its
	// name, which upstream reports as well.
	wantInvalid(t, "duplicate driver", err, `CSINode.storage.k8s.io "`+name+`" is invalid: [spec.drivers[1].nodeID: Required value, spec.drivers[1].name: Duplicate value: "ebs.csi.aws.com", `+
		`spec.drivers: Invalid value: {"Name":"ebs.csi.aws.com","NodeID":"","TopologyKeys":null,"Allocatable":null}: field is immutable]`)

	// Storage health is behind an alpha gate that is off: /status keeps
	// nothing.
	withHealth := n.DeepCopy()
	withHealth.Status.StorageHealth = []storagev1.StorageHealth{{Name: ebs.Name}}
	st, err := nodes.UpdateStatus(ctx, withHealth, metav1.UpdateOptions{})
	if err != nil || len(st.Status.StorageHealth) != 0 {
		t.Errorf("status write: %+v (%v), want no storage health", st.Status, err)
	}
	_, err = kubelet.UpdateStatus(ctx, withHealth, metav1.UpdateOptions{})
	forbidden(t, "node writes CSINode status", err, "CSINode status access requires CSIVolumeHealth feature")

	list, err := nodes.List(ctx, metav1.ListOptions{})
	if err != nil || !listed(len(list.Items), func(i int) string { return list.Items[i].Name }, name) {
		t.Errorf("list lacks %s (%v)", name, err)
	}
	out := mustKubectl(t, "", "get", "csinodes")
	if h := header(out); h != "NAME DRIVERS AGE" {
		t.Errorf("header %q", h)
	}
	if row := tableRow(t, out, name); row[1] != "2" {
		t.Errorf("row %q", row)
	}

	err = kubelet.Delete(ctx, other, metav1.DeleteOptions{})
	forbidden(t, "node deletes another's CSINode", err, "can only access CSINode with the same name as the requesting node")
	err = kubelet.Delete(ctx, name, metav1.DeleteOptions{})
	allowed(t, "node deletes its CSINode", err)
}

func testCSIStorageCapacities(t *testing.T) {
	ctx := context.Background()
	ns := testNamespace(t, "csisc")
	capacities := client.StorageV1().CSIStorageCapacities(ns)
	c, err := capacities.Create(ctx, &storagev1.CSIStorageCapacity{
		ObjectMeta:       metav1.ObjectMeta{GenerateName: "csisc-"},
		NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		StorageClassName: "fast",
		Capacity:         ptr.To(resource.MustParse("10Gi")),
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Capacity = ptr.To(resource.MustParse("4Gi"))
	c.MaximumVolumeSize = ptr.To(resource.MustParse("1Gi"))
	if c, err = capacities.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := capacities.Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil || got.Capacity.String() != "4Gi" || got.MaximumVolumeSize.String() != "1Gi" {
		t.Errorf("read back %+v (%v)", got, err)
	}

	bad := c.DeepCopy()
	bad.StorageClassName = "slow"
	bad.NodeTopology = nil
	_, err = capacities.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "topology and class changed", err, `CSIStorageCapacity.storage.k8s.io "`+c.Name+`" is invalid: [nodeTopology: Invalid value: null: field is immutable, storageClassName: Invalid value: "slow": field is immutable]`)
	_, err = capacities.Create(ctx, &storagev1.CSIStorageCapacity{
		ObjectMeta: metav1.ObjectMeta{Name: "negative"},
		Capacity:   ptr.To(resource.MustParse("-1")),
	}, metav1.CreateOptions{})
	wantInvalid(t, "bad capacity", err, `CSIStorageCapacity.storage.k8s.io "negative" is invalid: [`+
		`storageClassName: Invalid value: "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), `+
		`capacity: Invalid value: "-1": must be greater than or equal to 0]`)

	list, err := capacities.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("list %v (%v), want the one capacity", list, err)
	}
	out := mustKubectl(t, "", "get", "csistoragecapacities", "-n", ns)
	if h := header(out); h != "NAME STORAGECLASSNAME CAPACITY" {
		t.Errorf("header %q, want upstream's, which has no AGE", h)
	}
	if row := tableRow(t, out, c.Name); strings.Join(row[1:], " ") != "fast 4Gi" {
		t.Errorf("row %q", row)
	}
}

func testVolumeAttachments(t *testing.T) {
	ctx := context.Background()
	attachments := client.StorageV1().VolumeAttachments()
	name := "csi-" + utilrand.String(8)
	t.Cleanup(func() { _ = attachments.Delete(context.Background(), name, metav1.DeleteOptions{}) })

	va, err := attachments.Create(ctx, &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: storagev1.VolumeAttachmentSpec{
			Attacher: "ebs.csi.aws.com",
			NodeName: fakeNodeName,
			Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: ptr.To("pv-" + name)},
		},
		Status: storagev1.VolumeAttachmentStatus{Attached: true},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if va.Status.Attached {
		t.Errorf("status kept on create")
	}

	// The attacher reports through /status only.
	va.Status = storagev1.VolumeAttachmentStatus{Attached: true, AttachmentMetadata: map[string]string{"devicePath": "/dev/xvdb"}}
	va.Labels = map[string]string{"through": "status"}
	if va, err = attachments.UpdateStatus(ctx, va, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !va.Status.Attached || va.Labels != nil {
		t.Errorf("after /status: attached %v, labels %v; want attached and no labels", va.Status.Attached, va.Labels)
	}
	va.Status.Attached = false
	va.Labels = map[string]string{"through": "object"}
	if va, err = attachments.Update(ctx, va, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !va.Status.Attached || va.Labels["through"] != "object" {
		t.Errorf("after an update: attached %v, labels %v; want the status kept and the labels written", va.Status.Attached, va.Labels)
	}
	va.Status.AttachError = &storagev1.VolumeError{Message: "x", ErrorCode: ptr.To[int32](-1)}
	_, err = attachments.UpdateStatus(ctx, va, metav1.UpdateOptions{})
	wantInvalid(t, "negative error code", err, `VolumeAttachment.storage.k8s.io "`+name+`" is invalid: status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive`)

	bad, _ := attachments.Get(ctx, name, metav1.GetOptions{})
	bad.Spec.NodeName = "elsewhere"
	_, err = attachments.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "spec changed", err, `VolumeAttachment.storage.k8s.io "`+name+`" is invalid: spec: Invalid value: null: field is immutable`)

	_, err = attachments.Create(ctx, &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-" + name},
		Spec:       storagev1.VolumeAttachmentSpec{NodeName: "Node_1"},
	}, metav1.CreateOptions{})
	wantInvalid(t, "bad attachment", err, `VolumeAttachment.storage.k8s.io "bad-`+name+`" is invalid: [`+
		`spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName, `+
		`spec.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), `+
		`spec.attacher: Required value]`)

	list, err := attachments.List(ctx, metav1.ListOptions{})
	if err != nil || !listed(len(list.Items), func(i int) string { return list.Items[i].Name }, name) {
		t.Errorf("list lacks %s (%v)", name, err)
	}
	out := mustKubectl(t, "", "get", "volumeattachments")
	if h := header(out); h != "NAME ATTACHER PV NODE ATTACHED AGE" {
		t.Errorf("header %q", h)
	}
	if row := tableRow(t, out, name); strings.Join(row[1:5], " ") != "ebs.csi.aws.com pv-"+name+" "+fakeNodeName+" true" {
		t.Errorf("row %q", row)
	}
}

func testVolumeAttributesClasses(t *testing.T) {
	ctx := context.Background()
	classes := client.StorageV1().VolumeAttributesClasses()
	name := "gold-" + utilrand.String(5)
	applied := "silver-" + utilrand.String(5)
	t.Cleanup(func() {
		for _, n := range []string{name, applied} {
			_ = classes.Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})

	c, err := classes.Create(ctx, &storagev1.VolumeAttributesClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		DriverName: "ebs.csi.aws.com",
		Parameters: map[string]string{"iops": "4000"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Labels = map[string]string{"tier": "gold"}
	if c, err = classes.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := classes.Get(ctx, name, metav1.GetOptions{}); err != nil || got.Labels["tier"] != "gold" {
		t.Errorf("read back %+v (%v)", got, err)
	}

	bad := c.DeepCopy()
	bad.DriverName = "other.example.com"
	bad.Parameters["iops"] = "8000"
	_, err = classes.Update(ctx, bad, metav1.UpdateOptions{})
	wantInvalid(t, "class changed", err, `VolumeAttributesClass.storage.k8s.io "`+name+`" is invalid: [driverName: Forbidden: updates to driverName are forbidden., parameters: Forbidden: updates to parameters are forbidden.]`)
	_, err = classes.Create(ctx, &storagev1.VolumeAttributesClass{ObjectMeta: metav1.ObjectMeta{Name: "empty-" + name}}, metav1.CreateOptions{})
	wantInvalid(t, "empty class", err, `VolumeAttributesClass.storage.k8s.io "empty-`+name+`" is invalid: [driverName: Required value, parameters: Required value: must contain at least one key/value pair]`)

	list, err := classes.List(ctx, metav1.ListOptions{})
	if err != nil || !listed(len(list.Items), func(i int) string { return list.Items[i].Name }, name) {
		t.Errorf("list lacks %s (%v)", name, err)
	}
	// Server-side apply knows the type's schema.
	manifest := `
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: ` + applied + `}
driverName: pd.csi.storage.gke.io
parameters: {provisioned-iops: "3000"}
`
	mustKubectl(t, manifest, "apply", "--server-side", "-f", "-")
	res := runKubectl(t, strings.Replace(manifest, `"3000"`, `"6000"`, 1), "apply", "--server-side", "-f", "-")
	if want := `The VolumeAttributesClass "` + applied + `" is invalid: parameters: Forbidden: updates to parameters are forbidden.`; res.Code == 0 || !strings.Contains(res.Stderr, want) {
		t.Errorf("applying new parameters: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}

	out := mustKubectl(t, "", "get", "vac")
	if h := header(out); h != "NAME DRIVERNAME AGE" {
		t.Errorf("header %q", h)
	}
	if row := tableRow(t, out, name); row[1] != "ebs.csi.aws.com" {
		t.Errorf("row %q", row)
	}
	if row := tableRow(t, out, applied); row[1] != "pd.csi.storage.gke.io" {
		t.Errorf("row %q", row)
	}
}

// listed reports whether one of n items, named by name(i), is want.
func listed(n int, name func(int) string, want string) bool {
	for i := 0; i < n; i++ {
		if name(i) == want {
			return true
		}
	}
	return false
}
