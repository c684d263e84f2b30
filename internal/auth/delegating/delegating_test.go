package delegating

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeTokenReviews answers from a table of tokens and counts the reviews.
type fakeTokenReviews struct {
	users map[string]authenticationv1.UserInfo
	errs  []error // returned, in order, before any answer
	calls int
}

func (f *fakeTokenReviews) Create(_ context.Context, tr *authenticationv1.TokenReview, _ metav1.CreateOptions) (*authenticationv1.TokenReview, error) {
	f.calls++
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	out := tr.DeepCopy()
	switch u, ok := f.users[tr.Spec.Token]; {
	case ok:
		out.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: u}
	case tr.Spec.Token == "malformed":
		out.Status.Error = "token is malformed"
	}
	return out, nil
}

func request(header string, cert *x509.Certificate) *http.Request {
	r := httptest.NewRequest("GET", "https://node:10250/pods", nil)
	r.TLS = nil
	if header != "" {
		r.Header.Set("Authorization", header)
	}
	if cert != nil {
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	}
	return r
}

func TestAuthenticateRequest(t *testing.T) {
	reviews := &fakeTokenReviews{users: map[string]authenticationv1.UserInfo{
		"good": {Username: "system:serviceaccount:ns:sa", UID: "u1", Groups: []string{"system:serviceaccounts", "system:authenticated"},
			Extra: map[string]authenticationv1.ExtraValue{"authentication.kubernetes.io/pod-name": {"p"}}},
		"plain": {Username: "carol"},
	}}
	a := NewAuthenticator(reviews)
	admin := &x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"team"}}}
	cases := []struct {
		name    string
		r       *http.Request
		ok      bool
		err     bool
		user    string
		groups  []string
		reviews int // reviews made so far, counting earlier cases
	}{
		{name: "nothing", r: request("", nil)},
		{name: "certificate", r: request("", admin), ok: true, user: "kube-apiserver-kubelet-client", groups: []string{"team", "system:authenticated"}},
		{name: "certificate before token", r: request("Bearer good", admin), ok: true, user: "kube-apiserver-kubelet-client", groups: []string{"team", "system:authenticated"}},
		{name: "certificate without CN", r: request("", &x509.Certificate{}), ok: false},
		{name: "token", r: request("Bearer good", nil), ok: true, user: "system:serviceaccount:ns:sa", groups: []string{"system:serviceaccounts", "system:authenticated"}, reviews: 1},
		{name: "token again, cached", r: request("bearer good", nil), ok: true, user: "system:serviceaccount:ns:sa", groups: []string{"system:serviceaccounts", "system:authenticated"}, reviews: 1},
		{name: "token without groups", r: request("Bearer plain", nil), ok: true, user: "carol", groups: []string{"system:authenticated"}, reviews: 2},
		{name: "unknown token", r: request("Bearer bad", nil), err: true, reviews: 3},
		{name: "unknown token again, cached", r: request("Bearer bad", nil), err: true, reviews: 3},
		{name: "review error is not cached", r: request("Bearer malformed", nil), err: true, reviews: 4},
		{name: "review error again", r: request("Bearer malformed", nil), err: true, reviews: 5},
		{name: "basic auth", r: request("Basic Zm9vOmJhcg==", nil), reviews: 5},
		{name: "empty bearer", r: request("Bearer ", nil), reviews: 5},
		{name: "token with trailing part", r: request("Bearer good extra", nil), ok: true, user: "system:serviceaccount:ns:sa", groups: []string{"system:serviceaccounts", "system:authenticated"}, reviews: 5},
	}
	for _, c := range cases {
		resp, ok, err := a.AuthenticateRequest(c.r)
		if ok != c.ok || (err != nil) != c.err {
			t.Errorf("%s: ok %v err %v", c.name, ok, err)
		}
		if ok {
			if resp.User.GetName() != c.user || !slices.Equal(resp.User.GetGroups(), c.groups) {
				t.Errorf("%s: user %q groups %q", c.name, resp.User.GetName(), resp.User.GetGroups())
			}
			if c.r.TLS == nil && c.r.Header.Get("Authorization") != "" {
				t.Errorf("%s: the token stays on the request", c.name)
			}
		}
		if reviews.calls != c.reviews {
			t.Errorf("%s: %d reviews, want %d", c.name, reviews.calls, c.reviews)
		}
	}
	resp, _, _ := a.AuthenticateRequest(request("Bearer good", nil))
	if got := resp.User.GetExtra()["authentication.kubernetes.io/pod-name"]; !slices.Equal(got, []string{"p"}) || resp.User.GetUID() != "u1" {
		t.Errorf("extra %v uid %q", resp.User.GetExtra(), resp.User.GetUID())
	}
}

func TestTokenCacheExpires(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	reviews := &fakeTokenReviews{users: map[string]authenticationv1.UserInfo{"good": {Username: "dave"}}}
	a := NewAuthenticator(reviews, WithTokenClock(clock), WithTokenTTL(2*time.Minute, 10*time.Second))
	ctx := context.Background()
	check := func(token string, wantOK bool, wantCalls int) {
		t.Helper()
		_, ok, _ := a.AuthenticateToken(ctx, token)
		if ok != wantOK || reviews.calls != wantCalls {
			t.Errorf("%s: ok %v after %d reviews, want %v after %d", token, ok, reviews.calls, wantOK, wantCalls)
		}
	}
	check("good", true, 1)
	check("bad", false, 2)
	clock.Step(11 * time.Second)
	check("good", true, 2)
	check("bad", false, 3)
	clock.Step(2 * time.Minute)
	check("good", true, 4)
}

func TestTokenReviewRetries(t *testing.T) {
	reviews := &fakeTokenReviews{
		users: map[string]authenticationv1.UserInfo{"good": {Username: "erin"}},
		errs:  []error{apierrors.NewInternalError(errors.New("etcd")), apierrors.NewTooManyRequests("slow down", 0)},
	}
	if _, ok, err := NewAuthenticator(reviews).AuthenticateToken(context.Background(), "good"); !ok || err != nil || reviews.calls != 3 {
		t.Errorf("ok %v err %v after %d reviews", ok, err, reviews.calls)
	}
	// A refusal of the reviewer itself is final.
	reviews = &fakeTokenReviews{errs: []error{apierrors.NewForbidden(authenticationv1.Resource("tokenreviews"), "", errors.New("no"))}}
	if _, ok, err := NewAuthenticator(reviews).AuthenticateToken(context.Background(), "good"); ok || !apierrors.IsForbidden(err) || reviews.calls != 1 {
		t.Errorf("ok %v err %v after %d reviews", ok, err, reviews.calls)
	}
}

// fakeSARs allows the users in allow, denies those in deny, and records
// the specs asked about.
type fakeSARs struct {
	allow, deny map[string]bool
	errs        []error
	specs       []authorizationv1.SubjectAccessReviewSpec
}

func (f *fakeSARs) Create(_ context.Context, sar *authorizationv1.SubjectAccessReview, _ metav1.CreateOptions) (*authorizationv1.SubjectAccessReview, error) {
	f.specs = append(f.specs, sar.Spec)
	if len(f.errs) > 0 {
		err := f.errs[0]
		f.errs = f.errs[1:]
		return nil, err
	}
	out := sar.DeepCopy()
	out.Status.Allowed = f.allow[sar.Spec.User]
	out.Status.Denied = f.deny[sar.Spec.User]
	out.Status.Reason = "because"
	return out, nil
}

func nodeAttrs(name, subresource string) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: name, UID: "id-" + name, Groups: []string{"g"}, Extra: map[string][]string{"k": {"v"}}},
		Verb: "get", APIVersion: "v1", Resource: "nodes", Subresource: subresource, Name: "node-1", ResourceRequest: true, Path: "/x",
	}
}

func TestAuthorize(t *testing.T) {
	clock := clocktesting.NewFakeClock(time.Now())
	sars := &fakeSARs{allow: map[string]bool{"admin": true, "both": true}, deny: map[string]bool{"banned": true, "both": true}}
	a := NewAuthorizer(sars, WithDecisionClock(clock))
	ctx := context.Background()

	decide := func(attrs authorizer.Attributes, want authorizer.Decision, wantErr bool, wantReviews int) {
		t.Helper()
		d, _, err := a.Authorize(ctx, attrs)
		if d != want || (err != nil) != wantErr || len(sars.specs) != wantReviews {
			t.Errorf("%s %s: %v, %v after %d reviews; want %v after %d", attrs.GetUser().GetName(), attrs.GetSubresource(), d, err, len(sars.specs), want, wantReviews)
		}
	}
	decide(nodeAttrs("admin", "proxy"), authorizer.DecisionAllow, false, 1)
	want := authorizationv1.SubjectAccessReviewSpec{
		User: "admin", UID: "id-admin", Groups: []string{"g"}, Extra: map[string]authorizationv1.ExtraValue{"k": {"v"}},
		ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "get", Version: "v1", Resource: "nodes", Subresource: "proxy", Name: "node-1"},
	}
	if !reflect.DeepEqual(sars.specs[0], want) {
		t.Errorf("review spec %+v", sars.specs[0])
	}
	decide(nodeAttrs("admin", "proxy"), authorizer.DecisionAllow, false, 1)
	decide(nodeAttrs("admin", "metrics"), authorizer.DecisionAllow, false, 2)
	decide(nodeAttrs("nobody", "proxy"), authorizer.DecisionNoOpinion, false, 3)
	decide(nodeAttrs("nobody", "proxy"), authorizer.DecisionNoOpinion, false, 3)
	decide(nodeAttrs("banned", "proxy"), authorizer.DecisionDeny, false, 4)
	decide(nodeAttrs("both", "proxy"), authorizer.DecisionDeny, true, 5)

	// A refusal is asked again after 30 s, an allowance after 5 min.
	clock.Step(31 * time.Second)
	decide(nodeAttrs("nobody", "proxy"), authorizer.DecisionNoOpinion, false, 6)
	decide(nodeAttrs("admin", "proxy"), authorizer.DecisionAllow, false, 6)
	clock.Step(5 * time.Minute)
	decide(nodeAttrs("admin", "proxy"), authorizer.DecisionAllow, false, 7)

	// Non-resource requests are reviewed as paths.
	decide(authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "admin"}, Verb: "get", Path: "/healthz"}, authorizer.DecisionAllow, false, 8)
	if nr := sars.specs[7].NonResourceAttributes; nr == nil || nr.Path != "/healthz" || nr.Verb != "get" || sars.specs[7].ResourceAttributes != nil {
		t.Errorf("non-resource spec %+v", sars.specs[7])
	}

	// Errors are not cached, and a failed review is no opinion.
	sars.errs = []error{apierrors.NewUnauthorized("who are you")}
	decide(nodeAttrs("admin", "stats"), authorizer.DecisionNoOpinion, true, 9)
	decide(nodeAttrs("admin", "stats"), authorizer.DecisionAllow, false, 10)
	sars.errs = []error{apierrors.NewInternalError(errors.New("etcd"))}
	decide(nodeAttrs("admin", "log"), authorizer.DecisionAllow, false, 12)
}
