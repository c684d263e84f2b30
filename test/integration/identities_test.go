package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"

	"github.com/orca-project/orca/internal/auth/pki"
)

// certClient is a client with a certificate the cluster CA signed for cn
// in groups: the identity a component of Orca authenticates as.
func certClient(t *testing.T, cn string, groups ...string) kubernetes.Interface {
	t.Helper()
	ca, err := pki.LoadOrCreateCA(filepath.Join(filepath.Dir(inst.Kubeconfig), "tls"), "ca", "orca-ca")
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := pki.LoadOrIssue(t.TempDir(), "client", ca, pki.LeafSpec{CommonName: cn, Organizations: groups})
	if err != nil {
		t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(&rest.Config{Host: inst.URL, TLSClientConfig: rest.TLSClientConfig{
		CAData: restCfg.CAData, CertData: leaf.CertPEM, KeyData: leaf.KeyPEM,
	}})
}

// forbidden fails unless err is a 403 whose message contains want.
func forbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: %v, want 403 containing %q", what, err, want)
	}
}

func allowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// TestComponentIdentities: each component's own identity does its work
// and is refused outside its role.
func TestComponentIdentities(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "ident")

	sched := certClient(t, "system:kube-scheduler")
	_, err := sched.CoreV1().Pods("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "scheduler lists pods", err)
	_, err = sched.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	forbidden(t, "scheduler creates a secret", err, `User "system:kube-scheduler" cannot create resource "secrets"`)
	err = sched.CoreV1().Nodes().Delete(ctx, "any", metav1.DeleteOptions{})
	forbidden(t, "scheduler deletes a node", err, `cannot delete resource "nodes"`)

	dns := certClient(t, "system:orca:dns")
	_, err = dns.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "dns lists endpoint slices", err)
	_, err = dns.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	forbidden(t, "dns lists secrets", err, `User "system:orca:dns" cannot list resource "secrets"`)
	_, err = dns.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
	forbidden(t, "dns creates a service outside kube-system", err, `cannot create resource "services"`)

	proxy := certClient(t, "system:kube-proxy")
	_, err = proxy.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "kube-proxy lists endpoint slices", err)
	_, err = proxy.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "kube-proxy lists nodes (routes between nodes)", err)
	_, err = proxy.DiscoveryV1().EndpointSlices(ns).Create(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "x"}, AddressType: discoveryv1.AddressTypeIPv4}, metav1.CreateOptions{})
	forbidden(t, "kube-proxy writes a slice", err, `cannot create resource "endpointslices"`)

	cm := certClient(t, "system:kube-controller-manager")
	_, err = cm.CoreV1().Secrets("").List(ctx, metav1.ListOptions{Limit: 1})
	allowed(t, "controller manager's informers list", err)
	err = cm.CoreV1().Pods(ns).Delete(ctx, "any", metav1.DeleteOptions{})
	forbidden(t, "controller manager's own identity deletes a pod", err, `cannot delete resource "pods"`)

	// A controller's own service account holds its controller role.
	tr, err := client.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "deployment-controller", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of the deployment controller's account (created by the controller manager): %v", err)
	}
	dc := tokenClient(t, tr.Status.Token)
	_, err = dc.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	allowed(t, "deployment controller lists replicasets", err)
	_, err = dc.CoreV1().Secrets(ns).Get(ctx, "any", metav1.GetOptions{})
	forbidden(t, "deployment controller reads a secret", err, `User "system:serviceaccount:kube-system:deployment-controller" cannot get resource "secrets"`)
}

// TestNodeRestriction: a node's credentials read only what its own pods
// use, and cannot label themselves into restricted keys or touch another
// node.
func TestNodeRestriction(t *testing.T) {
	ctx := context.Background()
	ns := admissionNamespace(t, "noderestr")
	for _, n := range []string{"restr-n1", "restr-n2"} {
		if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{}) })
	}
	for i, n := range []string{"restr-n1", "restr-n2"} {
		secret := []string{"s1", "s2"}[i]
		if _, err := client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secret}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p-" + n}, Spec: corev1.PodSpec{
			NodeName:   n,
			Containers: []corev1.Container{{Name: "c", Image: "img"}},
			Volumes:    []corev1.Volume{{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		}}
		if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	n1 := certClient(t, "system:node:restr-n1", "system:nodes")
	eventually(t, 5*time.Second, func() error {
		_, err := n1.CoreV1().Secrets(ns).Get(ctx, "s1", metav1.GetOptions{})
		return err
	})
	_, err := n1.CoreV1().Secrets(ns).Get(ctx, "s2", metav1.GetOptions{})
	forbidden(t, "node 1 reads node 2's pod's secret", err, `User "system:node:restr-n1" cannot get resource "secrets" in API group "" in the namespace "`+ns+`": no relationship found between node 'restr-n1' and this object`)
	_, err = n1.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
	forbidden(t, "node lists secrets", err, `cannot list resource "secrets"`)
	_, err = n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=restr-n1"})
	allowed(t, "node lists its own pods", err)
	_, err = n1.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	forbidden(t, "node lists every pod", err, "can only list/watch pods with spec.nodeName field selector")

	patch := []byte(`{"metadata":{"labels":{"node-restriction.kubernetes.io/trusted":"yes"}}}`)
	_, err = n1.CoreV1().Nodes().Patch(ctx, "restr-n1", types.MergePatchType, patch, metav1.PatchOptions{})
	forbidden(t, "node labels itself into a restricted key", err, `node "restr-n1" is not allowed to modify labels: node-restriction.kubernetes.io/trusted`)
	_, err = n1.CoreV1().Nodes().Patch(ctx, "restr-n1", types.MergePatchType, []byte(`{"metadata":{"labels":{"example.com/disk":"ssd"}}}`), metav1.PatchOptions{})
	allowed(t, "node sets an ordinary label on itself", err)
	_, err = n1.CoreV1().Nodes().Patch(ctx, "restr-n2", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{})
	forbidden(t, "node changes another node", err, `node "restr-n1" is not allowed to modify node "restr-n2"`)
	_, err = n1.CoreV1().Pods(ns).UpdateStatus(ctx, mustPod(t, ns, "p-restr-n2"), metav1.UpdateOptions{})
	forbidden(t, "node writes another node's pod status", err, `can only update pod status for pods with spec.nodeName set to itself`)
	_, err = n1.CoreV1().Pods(ns).UpdateStatus(ctx, mustPod(t, ns, "p-restr-n1"), metav1.UpdateOptions{})
	allowed(t, "node writes its own pod's status", err)
	// Tokens only for its own pods' accounts, bound to one of its pods.
	bound := func(pod string) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{BoundObjectRef: &authenticationv1.BoundObjectReference{
			Kind: "Pod", APIVersion: "v1", Name: pod, UID: mustPod(t, ns, pod).UID,
		}}}
	}
	_, err = n1.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", bound("p-restr-n1"), metav1.CreateOptions{})
	allowed(t, "node gets a token bound to its own pod", err)
	_, err = n1.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	forbidden(t, "node gets an unbound token", err, "node requested token not bound to a pod")
	_, err = n1.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "default", bound("p-restr-n2"), metav1.CreateOptions{})
	forbidden(t, "node gets a token bound to another node's pod", err, "node requested token bound to a pod scheduled on a different node")
	_, err = n1.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, "deployment-controller", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	forbidden(t, "node gets a controller's token", err, "no relationship found between node 'restr-n1' and this object")
}

func mustPod(t *testing.T, ns, name string) *corev1.Pod {
	t.Helper()
	p, err := client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLocalPathNodeRights: a node's credentials list only the local-path
// volumes labelled with its name, and may take the local-path finalizer
// off one of them, changing nothing else, and nothing of another node's.
func TestLocalPathNodeRights(t *testing.T) {
	ctx := context.Background()
	for _, n := range []string{"lp-n1", "lp-n2"} {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "lp-" + n, Labels: map[string]string{"orca.io/local-path-node": n},
				Finalizers: []string{"orca.io/local-path-cleanup"}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/var/lib/orca/storage/" + n}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{n}}},
				}}}},
			},
		}
		if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_, _ = client.CoreV1().PersistentVolumes().Patch(context.Background(), "lp-"+n, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			_ = client.CoreV1().PersistentVolumes().Delete(context.Background(), "lp-"+n, metav1.DeleteOptions{})
		})
	}
	n1 := certClient(t, "system:node:lp-n1", "system:nodes")
	list, err := n1.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "orca.io/local-path-node=lp-n1"})
	allowed(t, "node lists its local-path volumes", err)
	if err == nil && (len(list.Items) != 1 || list.Items[0].Name != "lp-lp-n1") {
		t.Errorf("node's list: %v", list.Items)
	}
	_, err = n1.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: "orca.io/local-path-node=lp-n2"})
	forbidden(t, "node lists another node's volumes", err, "can only list/watch persistentvolumes with the orca.io/local-path-node label selector of the node")
	_, err = n1.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	forbidden(t, "node lists every volume", err, `cannot list resource "persistentvolumes"`)

	// As the node does it: an update of the volume it read, less the
	// finalizer; pv-protection's stays.
	// The volume controller writes the volumes' phase meanwhile; a conflict
	// comes before admission, as upstream, so the node reads again.
	release := func(name string, also func(*corev1.PersistentVolume)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			pv, err := client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var keep []string
			for _, f := range pv.Finalizers {
				if f != "orca.io/local-path-cleanup" {
					keep = append(keep, f)
				}
			}
			pv.Finalizers = keep
			if also != nil {
				also(pv)
			}
			_, err = n1.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{})
			return err
		})
	}
	err = release("lp-lp-n1", func(pv *corev1.PersistentVolume) { pv.Labels["orca.io/local-path-node"] = "lp-n2" })
	forbidden(t, "node relabels its volume while releasing it", err, `node "lp-n1" can only remove the orca.io/local-path-cleanup finalizer of persistentvolumes`)
	err = release("lp-lp-n2", nil)
	forbidden(t, "node releases another node's volume", err, `node "lp-n1" can only update persistentvolumes labelled orca.io/local-path-node=lp-n1`)
	err = release("lp-lp-n1", nil)
	allowed(t, "node removes the local-path finalizer of its own volume", err)
}
