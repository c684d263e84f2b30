package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/imagebuild"
	"github.com/orca-project/orca/internal/images"
)

const inclusterImage = "localhost/orca-test/incluster:1"

// goImages are the test images built from Go programs of testdata, by
// reference, each built once per run.
var goImages sync.Map // ref -> *goImage

type goImage struct {
	once sync.Once
	tar  string
	err  error
}

// goImageTar builds testdata/NAME (a main package of this module) as a
// static binary into a one-file image, /NAME its entrypoint, tagged ref,
// and returns the image archive.
func goImageTar(name, ref string) (string, error) {
	v, _ := goImages.LoadOrStore(ref, &goImage{})
	g := v.(*goImage)
	g.once.Do(func() {
		bin := filepath.Join(workDir, name)
		build := exec.Command("go", "build", "-o", bin, "./testdata/"+name)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			g.err = fmt.Errorf("build testdata/%s: %v\n%s", name, err, out)
			return
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			g.err = err
			return
		}
		img := imagebuild.Image{
			Ref:     ref,
			Entries: []imagebuild.Entry{imagebuild.FileEntry("/"+name, 0o755, b)},
			Config:  imagebuild.Config{Entrypoint: []string{"/" + name}},
		}
		g.tar = filepath.Join(workDir, name+".tar")
		g.err = img.WriteFile(g.tar)
	})
	return g.tar, g.err
}

// TestInClusterClient: a pod on the server's node and one on another node
// reach the API server through the `kubernetes` Service with client-go's
// in-cluster configuration, by the service's address and by its DNS name.
func TestInClusterClient(t *testing.T) {
	nodes := needNodes(t, 2)
	tar, err := goImageTar("incluster", inclusterImage)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{nodeDir, extraNodeDir(nodes[1])} {
		if _, err := images.Import(context.Background(), images.SocketPath(dir), tar); err != nil {
			t.Fatalf("import the in-cluster client: %v", err)
		}
	}
	ns := namespace(t)
	ctx := context.Background()
	// Reading pods is what `view` allows; bound now so the test holds once
	// authorization is enforced.
	if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "default-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, node := range nodes {
		name := fmt.Sprintf("client-%d", i)
		grace := int64(1)
		createPod(t, &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: v1.PodSpec{
				NodeName: node, RestartPolicy: v1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
				Tolerations: []v1.Toleration{{Key: extraNodeTaint.Key, Operator: v1.TolerationOpExists}},
				Containers: []v1.Container{{
					Name: "client", Image: inclusterImage, ImagePullPolicy: v1.PullNever,
					Args: []string{"-host", "https://kubernetes.default.svc"},
				}},
			},
		})
	}
	for i, node := range nodes {
		name := fmt.Sprintf("client-%d", i)
		p := waitPod(t, ns, name, 2*time.Minute, "finished", func(p *v1.Pod) bool {
			return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		})
		logs := kubectlOK(t, "", "logs", "-n", ns, name)
		if p.Status.Phase != v1.PodSucceeded {
			t.Errorf("client on %s: %s\n%s", node, describeStatus(p), logs)
			continue
		}
		// Both ways, and the list saw the clients themselves.
		want := []string{"https://10.43.0.1:443: 2 pods in " + ns, "https://kubernetes.default.svc: 2 pods in " + ns}
		for _, w := range want {
			if !strings.Contains(logs, w) {
				t.Errorf("client on %s printed %q, want a line %q", node, logs, w)
			}
		}
	}
}

// extraNodeDir is the data directory of an extra node by name.
func extraNodeDir(name string) string {
	extraMu.Lock()
	defer extraMu.Unlock()
	for _, x := range extraNodes {
		if x.name == name {
			return x.dir
		}
	}
	return ""
}
