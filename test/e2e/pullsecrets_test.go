package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/imagebuild"
)

// privateRegistry serves one image, to clients that log in with user and
// password only, over the read-only part of the distribution API. It
// listens on loopback, where the runtime speaks plain HTTP.
func privateRegistry(t *testing.T, repo, user, password string) (host string, authorized *atomic.Int32) {
	t.Helper()
	img, err := imagebuild.Busybox("")
	if err != nil {
		t.Fatal(err)
	}
	a, err := img.Build()
	if err != nil {
		t.Fatal(err)
	}
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": a.ID, "size": len(a.Config)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": a.LayerDigest, "size": len(a.Layer)}},
	})
	blobs := map[string][]byte{a.ID: a.Config, a.LayerDigest: a.Layer}
	authorized = &atomic.Int32{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		authorized.Add(1)
		path := r.URL.Path
		switch {
		case path == "/v2/" || path == "/v2":
			w.WriteHeader(http.StatusOK)
		case strings.HasPrefix(path, "/v2/"+repo+"/manifests/"):
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			w.Header().Set("Docker-Content-Digest", digestOf(manifest))
			w.Header().Set("Content-Length", fmt.Sprint(len(manifest)))
			if r.Method != http.MethodHead {
				_, _ = w.Write(manifest)
			}
		case strings.HasPrefix(path, "/v2/"+repo+"/blobs/"):
			b, ok := blobs[strings.TrimPrefix(path, "/v2/"+repo+"/blobs/")]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(b)))
			if r.Method != http.MethodHead {
				_, _ = w.Write(b)
			}
		default:
			http.NotFound(w, r)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String(), authorized
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// A pod pulls from a registry that wants a login with the credentials of
// its imagePullSecrets; without them the pull is refused, and a pull
// secret that does not exist is reported before the pull is tried.
func TestImagePullSecrets(t *testing.T) {
	needCluster(t)
	ns := namespace(t)
	ctx := context.Background()
	host, authorized := privateRegistry(t, "private/busybox", "robot", "s3cret")
	image := host + "/private/busybox:1.0"
	auths, _ := json.Marshal(map[string]any{"auths": map[string]any{host: map[string]string{"username": "robot", "password": "s3cret"}}})
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "regcred"}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: auths},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	withSecret := simplePod(ns, "with-secret", "exec sleep 3600")
	withSecret.Spec.Containers[0].Image = image
	withSecret.Spec.Containers[0].ImagePullPolicy = v1.PullAlways
	withSecret.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "absent"}, {Name: "regcred"}}
	createPod(t, withSecret)
	waitPod(t, ns, "with-secret", 2*time.Minute, "Running", running)
	if authorized.Load() == 0 {
		t.Error("the registry saw no request with the secret's login")
	}
	evs := events(t, ns, "with-secret")
	if !hasEvent(evs, "FailedToRetrieveImagePullSecret: Unable to retrieve some image pull secrets (absent); attempting to pull the image may not succeed.") {
		t.Errorf("events %q lack the warning about the missing pull secret", evs)
	}

	without := simplePod(ns, "without-secret", "exec sleep 3600")
	without.Spec.Containers[0].Image = image
	without.Spec.Containers[0].ImagePullPolicy = v1.PullAlways
	createPod(t, without)
	waitPod(t, ns, "without-secret", 2*time.Minute, "ErrImagePull or ImagePullBackOff", func(p *v1.Pod) bool {
		cs := containerStatus(p, "main")
		return cs != nil && cs.State.Waiting != nil &&
			(cs.State.Waiting.Reason == "ErrImagePull" || cs.State.Waiting.Reason == "ImagePullBackOff")
	})
}
