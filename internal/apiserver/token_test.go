package apiserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/auth/serviceaccount"
)

func TestValidateTokenRequest(t *testing.T) {
	for _, tt := range []struct {
		secs int64
		want string
	}{
		{599, "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes"},
		{600, ""},
		{3600, ""},
		{1 << 32, ""},
		{1<<32 + 1, "may not specify a duration larger than 2^32 seconds"},
	} {
		tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(tt.secs)}}
		errs := validateTokenRequest(tr)
		got := errs.ToAggregate()
		switch {
		case tt.want == "" && got != nil:
			t.Errorf("%d: unexpected error %v", tt.secs, got)
		case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
			t.Errorf("%d: error %v, want %q", tt.secs, got, tt.want)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":     "abc",
		"bearer abc":     "abc",
		"Bearer abc def": "abc",
		"Bearer ":        "",
		"Basic abc":      "",
		"":               "",
		"abc":            "",
	} {
		got, ok := bearerToken(header)
		if got != want || ok != (want != "") {
			t.Errorf("bearerToken(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
}

// fakeObjects serves objects by resource/namespace/name.
type fakeObjects map[string]runtime.Object

func (f fakeObjects) Get(_ context.Context, resource, ns, name string) (runtime.Object, error) {
	if o, ok := f[resource+"/"+ns+"/"+name]; ok {
		return o, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func TestTokenAuthenticator(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	toks, err := newTokens(&ServiceAccountTokens{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	issue := func(pod *serviceaccount.Ref, auds []string) string {
		tok, err := toks.signer.Issue(serviceaccount.NewClaims(toks.issuer, serviceaccount.Request{
			Namespace: "ns", ServiceAccount: serviceaccount.Ref{Name: "sa", UID: "sa-1"}, Pod: pod,
			Audiences: auds, Expiration: time.Hour,
		}, now, "jti"))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns", UID: "sa-1"}}
	recreatedSA := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sa", Namespace: "ns", UID: "sa-2"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "pod-1"}}
	longDeleted := metav1.NewTime(now.Add(-5 * time.Minute))
	deletingPod := pod.DeepCopy()
	deletingPod.DeletionTimestamp = &longDeleted
	plain := issue(nil, toks.audiences)
	bound := issue(&serviceaccount.Ref{Name: "p", UID: "pod-1"}, toks.audiences)

	for _, tt := range []struct {
		name    string
		objects fakeObjects
		header  string
		want    bool
	}{
		{"service account exists", fakeObjects{"serviceaccounts/ns/sa": sa}, "Bearer " + plain, true},
		{"service account deleted", fakeObjects{}, "Bearer " + plain, false},
		{"service account recreated", fakeObjects{"serviceaccounts/ns/sa": recreatedSA}, "Bearer " + plain, false},
		{"bound pod exists", fakeObjects{"serviceaccounts/ns/sa": sa, "pods/ns/p": pod}, "Bearer " + bound, true},
		{"bound pod gone", fakeObjects{"serviceaccounts/ns/sa": sa}, "Bearer " + bound, false},
		{"bound pod being deleted for minutes", fakeObjects{"serviceaccounts/ns/sa": sa, "pods/ns/p": deletingPod}, "Bearer " + bound, false},
		{"foreign audience", fakeObjects{"serviceaccounts/ns/sa": sa}, "Bearer " + issue(nil, []string{"vault"}), false},
		{"tampered", fakeObjects{"serviceaccounts/ns/sa": sa}, "Bearer " + plain[:len(plain)-4] + "AAAA", false},
		{"no header", fakeObjects{"serviceaccounts/ns/sa": sa}, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := &tokenAuthenticator{validator: toks.validator, objects: tt.objects, now: func() time.Time { return now }, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
			r, _ := http.NewRequest("GET", "/api/v1/pods", nil)
			if tt.header != "" {
				r.Header.Set("Authorization", tt.header)
			}
			u, ok := UnionAuthenticator{ClientCertAuthenticator{}, a}.Authenticate(r)
			if ok != tt.want {
				t.Fatalf("authenticated = %v, want %v", ok, tt.want)
			}
			if !ok {
				return
			}
			if u.Name != "system:serviceaccount:ns:sa" || strings.Join(u.Groups, ",") != "system:serviceaccounts,system:serviceaccounts:ns,system:authenticated" {
				t.Errorf("user = %+v", u)
			}
		})
	}
}

// A client certificate wins over a bearer token, and its user also gets
// system:authenticated.
func TestUnionPrefersCertificate(t *testing.T) {
	r, _ := http.NewRequest("GET", "/api", nil)
	r.Header.Set("Authorization", "Bearer not-a-jwt")
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{Subject: pkix.Name{CommonName: "system:admin", Organization: []string{"system:masters"}}}}}}
	u, ok := UnionAuthenticator{ClientCertAuthenticator{}, &tokenAuthenticator{}}.Authenticate(r)
	if !ok || u.Name != "system:admin" || strings.Join(u.Groups, ",") != "system:masters,system:authenticated" {
		t.Errorf("user = %+v, %v", u, ok)
	}
}
