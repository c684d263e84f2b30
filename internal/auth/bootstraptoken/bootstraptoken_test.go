package bootstraptoken

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func secretFor(t *testing.T, s Spec) *v1.Secret {
	t.Helper()
	sec, _, err := s.Secret(now)
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func TestAuthenticate(t *testing.T) {
	const tok = "abcdef.0123456789abcdef"
	valid := Spec{Token: tok, Usages: []string{"authentication", "signing"}, Groups: []string{NodeGroup}}
	for _, tc := range []struct {
		name    string
		token   string
		secret  func() *v1.Secret
		want    User
		wantErr string
	}{
		{name: "valid", token: tok, secret: func() *v1.Secret { return secretFor(t, valid) },
			want: User{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", NodeGroup}}},
		{name: "not a bootstrap token", token: "eyJhbGciOi.xyz", secret: func() *v1.Secret { return nil }, wantErr: ErrNotBootstrapToken.Error()},
		{name: "no secret", token: tok, secret: func() *v1.Secret { return nil }, wantErr: "no secret bootstrap-token-abcdef"},
		{name: "wrong secret", token: "abcdef.0000000000000000", secret: func() *v1.Secret { return secretFor(t, valid) }, wantErr: "invalid value for key token-secret"},
		{name: "expired", token: tok, secret: func() *v1.Secret {
			s := secretFor(t, Spec{Token: tok, TTL: time.Minute, Usages: []string{"authentication"}})
			s.Data["expiration"] = []byte(now.Add(-time.Second).Format(time.RFC3339))
			return s
		}, wantErr: "expired"},
		{name: "not for authentication", token: tok, secret: func() *v1.Secret { return secretFor(t, Spec{Token: tok, Usages: []string{"signing"}}) }, wantErr: "not marked usage-bootstrap-authentication=true"},
		{name: "wrong type", token: tok, secret: func() *v1.Secret {
			s := secretFor(t, valid)
			s.Type = v1.SecretTypeOpaque
			return s
		}, wantErr: "invalid type"},
		{name: "being deleted", token: tok, secret: func() *v1.Secret {
			s := secretFor(t, valid)
			s.DeletionTimestamp = &metav1.Time{Time: now}
			return s
		}, wantErr: "deleted"},
		{name: "bad extra group", token: tok, secret: func() *v1.Secret {
			s := secretFor(t, valid)
			s.Data["auth-extra-groups"] = []byte("system:masters")
			return s
		}, wantErr: "auth-extra-groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Authenticate(tc.token, tc.secret(), now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, err := Authenticate("nope", nil, now); !errors.Is(err, ErrNotBootstrapToken) {
		t.Errorf("malformed token: %v", err)
	}
}

func TestSpecSecret(t *testing.T) {
	sec, tok, err := Spec{TTL: time.Hour, Usages: []string{"authentication"}, Description: "d"}.Secret(now)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := Parse(tok)
	if err != nil {
		t.Fatalf("generated token %q: %v", tok, err)
	}
	if sec.Name != "bootstrap-token-"+id || sec.Namespace != "kube-system" || string(sec.Type) != "bootstrap.kubernetes.io/token" {
		t.Errorf("secret %s/%s type %s", sec.Namespace, sec.Name, sec.Type)
	}
	in, ok := InfoOf(sec)
	if !ok || in.ID != id || in.Description != "d" || !in.Expires.Equal(now.Add(time.Hour)) || !reflect.DeepEqual(in.Usages, []string{"authentication"}) {
		t.Errorf("info %+v", in)
	}
	for _, bad := range []Spec{
		{Token: "ABCDEF.0123456789abcdef"},
		{Usages: []string{"launching"}},
		{Groups: []string{"system:masters"}},
		{TTL: -time.Second},
	} {
		if _, _, err := bad.Secret(now); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func selfSigned(t *testing.T) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ca"}, NotBefore: now, NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestJoinToken(t *testing.T) {
	ca, other := selfSigned(t), selfSigned(t)
	join := JoinToken(ca, "abcdef.0123456789abcdef")
	pin, tok, err := ParseJoinToken(join + "\n")
	if err != nil {
		t.Fatal(err)
	}
	if tok != "abcdef.0123456789abcdef" || pin != Pin(ca) {
		t.Errorf("parsed %q %q", pin, tok)
	}
	if got, err := VerifyPin([]*x509.Certificate{other, ca}, pin); err != nil || got != ca {
		t.Errorf("VerifyPin: %v", err)
	}
	if _, err := VerifyPin([]*x509.Certificate{other}, pin); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a different CA passed: %v", err)
	}
	for _, bad := range []string{
		"abcdef.0123456789abcdef",
		"K10abc::abcdef.0123456789abcdef",
		"K10" + strings.Repeat("z", 64) + "::abcdef.0123456789abcdef",
		"K10" + Pin(ca) + "::abcdef",
	} {
		if _, _, err := ParseJoinToken(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
