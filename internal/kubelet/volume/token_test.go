package volume

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNeedsRefresh(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	token := func(expSeconds *int64, exp time.Time) *authenticationv1.TokenRequest {
		return &authenticationv1.TokenRequest{
			Spec:   authenticationv1.TokenRequestSpec{ExpirationSeconds: expSeconds},
			Status: authenticationv1.TokenRequestStatus{ExpirationTimestamp: metav1.NewTime(exp)},
		}
	}
	hour := ptr(int64(3600))
	week := ptr(int64(7 * 24 * 3600))
	tests := []struct {
		name  string
		tr    *authenticationv1.TokenRequest
		after time.Duration
		want  bool
	}{
		{"fresh", token(hour, t0.Add(time.Hour)), 0, false},
		{"just before 80%", token(hour, t0.Add(time.Hour)), 48*time.Minute - time.Second, false},
		{"at 80%", token(hour, t0.Add(time.Hour)), 48 * time.Minute, true},
		{"expired", token(hour, t0.Add(time.Hour)), 2 * time.Hour, true},
		{"long-lived token, one day old", token(week, t0.Add(7*24*time.Hour)), 24 * time.Hour, true},
		{"long-lived token, younger than a day", token(week, t0.Add(7*24*time.Hour)), 23 * time.Hour, false},
		{"no expirationSeconds: lifetime from fetch time", token(nil, t0.Add(10*time.Minute)), 8 * time.Minute, true},
		{"no expirationSeconds, early", token(nil, t0.Add(10*time.Minute)), 7 * time.Minute, false},
	}
	for _, tt := range tests {
		if got := needsRefresh(t0.Add(tt.after), tt.tr, t0); got != tt.want {
			t.Errorf("%s: needsRefresh = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTokenRefreshedAtEightyPercent(t *testing.T) {
	now := time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	src := newFakeSources()
	src.now = clock
	m := newManager(t, src)
	m.Now = clock
	pod := podWith(v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3600))}}},
	}}})
	vols, err := setup(t, m, pod)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(vols["tok"].HostPath, "token")
	resync := func(at time.Duration) string {
		t.Helper()
		now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC).Add(at)
		if _, err := m.Setup(t.Context(), pod); err != nil {
			t.Fatalf("resync at %v: %v", at, err)
		}
		return readFile(t, file)
	}
	if got := resync(47 * time.Minute); got != "token-1" || len(src.tokenCalls) != 1 {
		t.Fatalf("before 80%%: token %q after %d requests", got, len(src.tokenCalls))
	}
	if got := resync(48 * time.Minute); got != "token-2" || len(src.tokenCalls) != 2 {
		t.Fatalf("at 80%%: token %q after %d requests", got, len(src.tokenCalls))
	}

	// A failed refresh keeps the valid cached token.
	src.tokenErr = errors.New("apiserver down")
	if got := resync(48*time.Minute + 48*time.Minute); got != "token-2" {
		t.Fatalf("failed refresh: token %q", got)
	}
	// Once it expired, the failure is the volume's.
	now = now.Add(time.Hour)
	_, err = m.Setup(t.Context(), pod)
	if err == nil || !strings.Contains(err.Error(), `MountVolume.SetUp failed for volume "tok" : token for shop/robot expired and refresh failed: apiserver down`) {
		t.Fatalf("err = %v", err)
	}

	// Teardown forgets the pod's tokens.
	if err := m.Teardown("uid-1"); err != nil {
		t.Fatal(err)
	}
	if len(m.tokens) != 0 {
		t.Fatalf("%d tokens cached after Teardown", len(m.tokens))
	}
}
