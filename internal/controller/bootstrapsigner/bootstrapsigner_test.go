package bootstrapsigner

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cluster-bootstrap/token/jws"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func tokenSecret(id, secret string, signing bool, expires *time.Time) *v1.Secret {
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id, Namespace: "kube-system"}, Type: "bootstrap.kubernetes.io/token",
		Data: map[string][]byte{"token-id": []byte(id), "token-secret": []byte(secret)}}
	if signing {
		s.Data["usage-bootstrap-signing"] = []byte("true")
	}
	if expires != nil {
		s.Data["expiration"] = []byte(expires.Format(time.RFC3339))
	}
	return s
}

func TestSigningTokens(t *testing.T) {
	past := now.Add(-time.Minute)
	got := signingTokens([]*v1.Secret{
		tokenSecret("aaaaaa", "0123456789abcdef", true, nil),
		tokenSecret("bbbbbb", "0123456789abcdef", false, nil),
		tokenSecret("cccccc", "0123456789abcdef", true, &past),
	}, now)
	if len(got) != 1 || got["aaaaaa"] != "0123456789abcdef" {
		t.Errorf("signing tokens %v", got)
	}
}

func TestSignatures(t *testing.T) {
	tokens := map[string]string{"aaaaaa": "0123456789abcdef"}
	data := map[string]string{"kubeconfig": "apiVersion: v1\nkind: Config\n", "jws-kubeconfig-gone00": "stale"}
	out, changed, err := signatures(data, tokens)
	if err != nil || !changed {
		t.Fatalf("changed %v err %v", changed, err)
	}
	if _, ok := out["jws-kubeconfig-gone00"]; ok {
		t.Error("signature of a gone token kept")
	}
	sig := out["jws-kubeconfig-aaaaaa"]
	if !jws.DetachedTokenIsValid(sig, data["kubeconfig"], "aaaaaa", "0123456789abcdef") {
		t.Errorf("signature %q does not verify", sig)
	}
	if _, ok := data["jws-kubeconfig-aaaaaa"]; ok {
		t.Error("input modified")
	}
	// Signed already: nothing to write.
	if _, changed, _ := signatures(out, tokens); changed {
		t.Error("re-signing a signed ConfigMap")
	}
	// The kubeconfig changes: the signature follows.
	out["kubeconfig"] += "# changed\n"
	again, changed, _ := signatures(out, tokens)
	if !changed || !jws.DetachedTokenIsValid(again["jws-kubeconfig-aaaaaa"], out["kubeconfig"], "aaaaaa", "0123456789abcdef") {
		t.Error("signature not renewed after the content changed")
	}
}
