package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/orca-project/orca/internal/auth/bootstraptoken"
)

func TestTokenListAndDelete(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	forever, _, err := bootstraptoken.Spec{Token: "aaaaaa.0123456789abcdef", Usages: []string{"authentication", "signing"}, Groups: []string{bootstraptoken.NodeGroup}, Description: "join"}.Secret(now)
	if err != nil {
		t.Fatal(err)
	}
	day, _, err := bootstraptoken.Spec{Token: "bbbbbb.0123456789abcdef", TTL: 24 * time.Hour, Usages: []string{"authentication"}}.Secret(now)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := printTokens(&out, []v1.Secret{*day, *forever}, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table:\n%s", out.String())
	}
	for i, want := range [][]string{
		{"TOKEN", "TTL", "EXPIRES", "USAGES", "DESCRIPTION", "EXTRA", "GROUPS"},
		{"aaaaaa.0123456789abcdef", "<forever>", "<never>", "signing,authentication", "join", bootstraptoken.NodeGroup},
		{"bbbbbb.0123456789abcdef", "23h", "2026-01-02T00:00:00Z", "authentication", "<none>", "<none>"},
	} {
		if got := strings.Fields(lines[i]); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("line %d: %q, want %q", i, got, want)
		}
	}

	client := fake.NewClientset(forever, day)
	out.Reset()
	ca := "K10" + strings.Repeat("0", 64) + "::"
	if err := deleteTokens(context.Background(), client, &out, []string{"aaaaaa", ca + "bbbbbb.0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "bootstrap token \"aaaaaa\" deleted\nbootstrap token \"bbbbbb\" deleted\n" {
		t.Errorf("output %q", out.String())
	}
	left, _ := client.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	if len(left.Items) != 0 {
		t.Errorf("%d secrets left", len(left.Items))
	}
	if err := deleteTokens(context.Background(), client, &out, []string{"cccccc"}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("deleting a missing token: %v", err)
	}
}
