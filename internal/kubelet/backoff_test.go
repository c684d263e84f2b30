package kubelet

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
)

// A container that keeps crashing right after each start waits 10 s, then
// 20 s, 40 s ... up to 5 minutes, as upstream's CrashLoopBackOff.
func TestRestartBackoffDoublesToFiveMinutes(t *testing.T) {
	start := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakeClock(start)
	b := newRestartBackoff(clk)
	// First crash: restarts at once.
	if _, _, blocked := gate(b, "k", clk.Now(), clk.Now()); blocked {
		t.Fatal("first restart was held back")
	}
	want := []time.Duration{10, 20, 40, 80, 160, 300, 300}
	for i, w := range want {
		finished := clk.Now() // crashed immediately after the restart
		wait, left, blocked := gate(b, "k", finished, clk.Now())
		if !blocked || wait != w*time.Second || left != w*time.Second {
			t.Fatalf("crash %d: wait %v left %v blocked %v, want %v", i+2, wait, left, blocked, w*time.Second)
		}
		clk.Step(wait - time.Second)
		if _, _, blocked := gate(b, "k", finished, clk.Now()); !blocked {
			t.Fatalf("crash %d: restarted a second early", i+2)
		}
		clk.Step(time.Second)
		if _, _, blocked := gate(b, "k", finished, clk.Now()); blocked {
			t.Fatalf("crash %d: still held back after %v", i+2, wait)
		}
	}
}

// A container that ran well for longer than twice the maximum back-off
// starts over at 10 s when it crashes again.
func TestRestartBackoffResetsAfterLongRun(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC))
	b := newRestartBackoff(clk)
	gate(b, "k", clk.Now(), clk.Now())
	for i := 0; i < 4; i++ { // back-off is now 160 s
		f := clk.Now()
		w, _, _ := gate(b, "k", f, clk.Now())
		clk.Step(w)
		gate(b, "k", f, clk.Now())
	}
	clk.Step(11 * time.Minute) // ran for 11 minutes
	f := clk.Now()
	if _, _, blocked := gate(b, "k", f, clk.Now()); blocked {
		t.Fatal("held back after a long healthy run")
	}
	if w, _, blocked := gate(b, "k", clk.Now(), clk.Now()); !blocked || w != 10*time.Second {
		t.Fatalf("next back-off %v (blocked %v), want 10s", w, blocked)
	}
}

// gate is what the kubelet does with a crashed container's back-off:
// computePodActions holds the restart back while the back-off lasts, and
// the restart it lets through is recorded.
func gate(b *flowcontrol.Backoff, key string, finishedAt, now time.Time) (wait, left time.Duration, blocked bool) {
	if h := restartHold(b, key, finishedAt); h.held {
		return h.wait, finishedAt.Add(h.wait).Sub(now), true
	}
	recordRestart(b, key, finishedAt)
	return 0, 0, false
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "x", "B": "y y"}
	tests := map[string]string{
		"$(A)":        "x",
		"a-$(A)-$(B)": "a-x-y y",
		"$$(A)":       "$(A)",
		"$(MISSING)":  "$(MISSING)",
		"$(A":         "$(A",
		"cost $5":     "cost $5",
		"plain":       "plain",
		"$(A)$(A)":    "xx",
		"trailing $":  "trailing $",
	}
	for in, want := range tests {
		if got := expand(in, vars); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

// A pull that keeps failing is tried again after 10 s, then 20 s, 40 s
// ... up to 5 minutes, for each pod on its own: between the tries the
// container shows ImagePullBackOff, after each try ErrImagePull.
func TestPullBackoffDoublesPerPod(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
	b := newPullBackoff(clk)
	c := &v1.Container{Name: "main", Image: "registry.local/missing:v1"}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	other := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "b"}}
	key := pullKey(pod, c)
	if h := pullHeld(b, key, clk.Now()); h.held {
		t.Fatal("first pull held back")
	}
	for i, w := range []time.Duration{10, 20, 40, 80, 160, 300, 300} {
		b.Next(key, clk.Now()) // the pull failed
		clk.Step(w*time.Second - time.Second)
		if h := pullHeld(b, key, clk.Now()); !h.held || h.wait != w*time.Second {
			t.Fatalf("failure %d: a second before the end: held %v for %v, want held for %v", i+1, h.held, h.wait, w*time.Second)
		}
		if h := pullHeld(b, pullKey(other, c), clk.Now()); h.held {
			t.Fatalf("failure %d: another pod's pull of the same image held back", i+1)
		}
		clk.Step(time.Second)
		if h := pullHeld(b, key, clk.Now()); h.held {
			t.Fatalf("failure %d: still held back after %v", i+1, w*time.Second)
		}
	}
	b.Reset(key) // a pull succeeded
	if h := pullHeld(b, key, clk.Now()); h.held {
		t.Fatal("held back after a successful pull")
	}
}
