package tokencleaner

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func token(name string, expires *time.Time) *v1.Secret {
	s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: types.UID("u-" + name)},
		Type: "bootstrap.kubernetes.io/token", Data: map[string][]byte{"token-id": []byte("abcdef")}}
	if expires != nil {
		s.Data["expiration"] = []byte(expires.Format(time.RFC3339))
	}
	return s
}

func TestExpiredTokensAreDeleted(t *testing.T) {
	past, future := t0.Add(-time.Minute), t0.Add(time.Hour)
	secrets := []*v1.Secret{token("bootstrap-token-old", &past), token("bootstrap-token-new", &future), token("bootstrap-token-forever", nil)}
	client := fake.NewClientset(secrets[0], secrets[1], secrets[2])
	c, err := newController(client, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), clocktesting.NewFakePassiveClock(t0))
	if err != nil {
		t.Fatal(err)
	}
	store := c.factory.Core().V1().Secrets().Informer().GetStore()
	for _, s := range secrets {
		if err := store.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range secrets {
		if err := c.sync(context.Background(), s.Name); err != nil {
			t.Fatal(err)
		}
	}
	left, _ := client.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	names := map[string]bool{}
	for _, s := range left.Items {
		names[s.Name] = true
	}
	if names["bootstrap-token-old"] || !names["bootstrap-token-new"] || !names["bootstrap-token-forever"] {
		t.Errorf("left %v", names)
	}
	// The live one waits its hour in the queue.
	if c.queue.Len() != 0 {
		t.Errorf("queued at once: %d", c.queue.Len())
	}
}

func TestTimeLeft(t *testing.T) {
	future := t0.Add(90 * time.Minute)
	if left, ok := timeLeft(token("x", &future), t0); !ok || left != 90*time.Minute {
		t.Errorf("future: %v %v", left, ok)
	}
	past := t0.Add(-time.Second)
	if left, ok := timeLeft(token("x", &past), t0); !ok || left != 0 {
		t.Errorf("past: %v %v", left, ok)
	}
	if _, ok := timeLeft(token("x", nil), t0); ok {
		t.Error("a token without expiration expires")
	}
}
