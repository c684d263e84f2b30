package serviceaccount

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestIssueAndValidate(t *testing.T) {
	key, other := newKey(t), newKey(t)
	signer, err := NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	req := Request{
		Namespace: "team", ServiceAccount: Ref{Name: "builder", UID: "sa-uid"},
		Pod: &Ref{Name: "web-0", UID: "pod-uid"}, Node: &Ref{Name: "n1", UID: "node-uid"},
		Audiences: []string{DefaultIssuer}, Expiration: time.Hour,
	}
	valid := Validator{Issuers: []string{DefaultIssuer}, Keys: []*ecdsa.PublicKey{&key.PublicKey}, Audiences: []string{DefaultIssuer}}
	issue := func(issuer string, r Request, at time.Time) string {
		tok, err := signer.Issue(NewClaims(issuer, r, at, "id-1"))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := issue(DefaultIssuer, req, now)
	otherAud := req
	otherAud.Audiences = []string{"vault"}

	for _, tt := range []struct {
		name    string
		v       Validator
		token   string
		at      time.Time
		wantErr string // empty: valid
	}{
		{name: "valid", v: valid, token: good, at: now},
		{name: "valid within leeway after expiry", v: valid, token: good, at: now.Add(time.Hour + 30*time.Second)},
		{name: "expired", v: valid, token: good, at: now.Add(time.Hour + 2*time.Minute), wantErr: "service account token has expired"},
		{name: "not yet valid", v: valid, token: good, at: now.Add(-2 * time.Minute), wantErr: "service account token is not valid yet"},
		{name: "wrong signature key", v: Validator{Issuers: valid.Issuers, Keys: []*ecdsa.PublicKey{&other.PublicKey}, Audiences: valid.Audiences}, token: good, at: now, wantErr: "signature is invalid"},
		{name: "tampered payload", v: valid, token: tamper(t, good), at: now, wantErr: "signature is invalid"},
		{name: "wrong audience", v: valid, token: issue(DefaultIssuer, otherAud, now), at: now, wantErr: "token audiences [\"vault\"] is invalid"},
		{name: "other issuer", v: valid, token: issue("https://elsewhere", req, now), at: now, wantErr: ErrNotOurs.Error()},
		{name: "not a JWT", v: valid, token: "abc.def", at: now, wantErr: ErrNotOurs.Error()},
		{name: "alg none", v: valid, token: withAlgNone(t, good), at: now, wantErr: `algorithm "none"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			info, err := tt.v.Validate(tt.token, tt.at)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Validate error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if info.UserName() != "system:serviceaccount:team:builder" || info.UID != "sa-uid" {
				t.Errorf("user = %s uid %s", info.UserName(), info.UID)
			}
			if info.Pod == nil || *info.Pod != (Ref{Name: "web-0", UID: "pod-uid"}) || info.Node == nil || info.Node.Name != "n1" {
				t.Errorf("bound objects = pod %v node %v", info.Pod, info.Node)
			}
			if want := []string{"system:serviceaccounts", "system:serviceaccounts:team"}; strings.Join(info.Groups(), ",") != strings.Join(want, ",") {
				t.Errorf("groups = %v", info.Groups())
			}
			if info.CredentialID != "JTI=id-1" {
				t.Errorf("credential id = %q", info.CredentialID)
			}
		})
	}
}

// TestClaimsWireFormat checks the payload other Kubernetes tooling reads.
func TestClaimsWireFormat(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	c := NewClaims(DefaultIssuer, Request{
		Namespace: "ns", ServiceAccount: Ref{Name: "sa", UID: "u1"}, Pod: &Ref{Name: "p", UID: "u2"},
		Audiences: []string{"a", "b"}, Expiration: 10 * time.Minute, WarnAfter: 5 * time.Minute,
	}, now, "jti")
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"iss": DefaultIssuer, "sub": "system:serviceaccount:ns:sa", "aud": []any{"a", "b"},
		"exp": float64(1_800_000_600), "iat": float64(1_800_000_000), "nbf": float64(1_800_000_000), "jti": "jti",
		"kubernetes.io": map[string]any{
			"namespace": "ns", "serviceaccount": map[string]any{"name": "sa", "uid": "u1"},
			"pod": map[string]any{"name": "p", "uid": "u2"}, "warnafter": float64(1_800_000_300),
		},
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("claims =\n%s\nwant\n%s", gb, wb)
	}
	var a Audience
	if err := json.Unmarshal([]byte(`"single"`), &a); err != nil || len(a) != 1 || a[0] != "single" {
		t.Errorf("string aud = %v, %v", a, err)
	}
}

// tamper rewrites the payload's subject, keeping the signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	p, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	p = []byte(strings.Replace(string(p), "builder", "admin00", 2))
	parts[1] = base64.RawURLEncoding.EncodeToString(p)
	return strings.Join(parts, ".")
}

func withAlgNone(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	parts[0] = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`))
	return parts[0] + "." + parts[1] + "."
}
