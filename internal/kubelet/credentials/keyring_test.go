package credentials

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func dockerConfigJSON(name, auths string) *v1.Secret {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, Type: v1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":` + auths + `}`)}}
}

func users(auths []*runtimeapi.AuthConfig) string {
	var out []string
	for _, a := range auths {
		out = append(out, a.Username+":"+a.Password)
	}
	return strings.Join(out, ",")
}

func TestLookup(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte("hub:hubpw"))
	k := FromSecrets([]*v1.Secret{
		dockerConfigJSON("a", `{
			"registry.example.com": {"username": "plain", "password": "pw"},
			"registry.example.com/team": {"username": "team", "password": "tpw"},
			"*.glob.example.com": {"username": "glob", "password": "gpw"},
			"https://index.docker.io/v1/": {"auth": "`+basic+`"},
			"localhost:5000": {"username": "local", "password": "lpw"}}`),
		{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, Type: v1.SecretTypeDockercfg,
			Data: map[string][]byte{v1.DockerConfigKey: []byte(`{"legacy.example.com": {"username": "old", "password": "opw"}}`)}},
		dockerConfigJSON("broken", `not json`),
		{ObjectMeta: metav1.ObjectMeta{Name: "opaque"}, Type: v1.SecretTypeOpaque,
			Data: map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{"registry.example.com":{"username":"x"}}}`)}},
	})
	for _, tc := range []struct{ image, want string }{
		{"registry.example.com/app:1", "plain:pw"},
		{"registry.example.com/team/app@sha256:" + strings.Repeat("a", 64), "team:tpw,plain:pw"},
		{"registry.example.com:443/app", ""},
		{"eu.glob.example.com/app", "glob:gpw"},
		{"a.b.glob.example.com/app", ""},
		{"busybox", "hub:hubpw"},
		{"library/busybox:1.37", "hub:hubpw"},
		{"docker.io/someone/tool", "hub:hubpw"},
		{"localhost:5000/app", "local:lpw"},
		{"localhost/app", ""},
		{"legacy.example.com/app", "old:opw"},
		{"other.example.com/app", ""},
	} {
		if got := users(k.Lookup(tc.image)); got != tc.want {
			t.Errorf("Lookup(%q) = %q, want %q", tc.image, got, tc.want)
		}
	}
}

func TestForPodReportsUnreadableSecrets(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: v1.PodSpec{ImagePullSecrets: []v1.LocalObjectReference{{Name: "present"}, {Name: "gone"}}}}
	get := func(_ context.Context, ns, name string) (*v1.Secret, error) {
		if name == "present" {
			return dockerConfigJSON(name, `{"r.example.com":{"username":"u","password":"p"}}`), nil
		}
		return nil, fmt.Errorf("secret %q not found", name)
	}
	k, missing := ForPod(context.Background(), get, pod)
	if len(missing) != 1 || missing[0] != "gone" {
		t.Errorf("missing = %v, want [gone]", missing)
	}
	if got := users(k.Lookup("r.example.com/app")); got != "u:p" {
		t.Errorf("credentials of the readable secret = %q", got)
	}
}

type fakePuller struct{ tried []string }

func (f *fakePuller) PullImage(_ context.Context, in *runtimeapi.PullImageRequest, _ ...grpc.CallOption) (*runtimeapi.PullImageResponse, error) {
	who := "anonymous"
	if in.Auth != nil {
		who = in.Auth.Username
	}
	f.tried = append(f.tried, who)
	if who == "good" {
		return &runtimeapi.PullImageResponse{ImageRef: "sha256:ok"}, nil
	}
	return nil, errors.New(who + " refused")
}

func TestPullTriesEachCredential(t *testing.T) {
	f := &fakePuller{}
	ref, err := Pull(context.Background(), f, "r/app", []*runtimeapi.AuthConfig{{Username: "bad"}, {Username: "good"}, {Username: "unused"}})
	if err != nil || ref != "sha256:ok" || strings.Join(f.tried, ",") != "bad,good" {
		t.Errorf("Pull = %q, %v after trying %v; want the second credential's success", ref, err, f.tried)
	}
	f = &fakePuller{}
	_, err = Pull(context.Background(), f, "r/app", []*runtimeapi.AuthConfig{{Username: "bad"}, {Username: "worse"}})
	if err == nil || !strings.Contains(err.Error(), "bad refused") || !strings.Contains(err.Error(), "worse refused") {
		t.Errorf("Pull with only failing credentials: %v, want both refusals", err)
	}
	f = &fakePuller{}
	if _, err := Pull(context.Background(), f, "r/app", nil); err == nil || strings.Join(f.tried, ",") != "anonymous" {
		t.Errorf("Pull without credentials tried %v", f.tried)
	}
}
