package logs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const sample = `2016-10-06T00:17:09.669794202Z stdout F first
2016-10-06T00:17:10.000000000Z stdout P sec
2016-10-06T00:17:10.100000000Z stdout P o
2016-10-06T00:17:10.200000000Z stdout F nd
2016-10-06T00:17:11.000000000Z stderr F third
not a log line
2016-10-06T00:17:12.000000000Z stdout F fourth
`

func writeLog(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "0.log")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func notRunning(context.Context) (bool, error) { return false, nil }

func TestRead(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name    string
		content string
		opts    Options
		want    string
	}{
		{"all, partial lines joined", sample, Options{}, "first\nsecond\nthird\nfourth\n"},
		{"tail counts joined lines", sample, Options{TailLines: ptr.To[int64](3)}, "second\nthird\nfourth\n"},
		{"tail larger than the file", sample, Options{TailLines: ptr.To[int64](100)}, "first\nsecond\nthird\nfourth\n"},
		{"tail zero", sample, Options{TailLines: ptr.To[int64](0)}, ""},
		{"tail counts an unfinished line", "2016-10-06T00:17:09Z stdout F a\n2016-10-06T00:17:09Z stdout F b\n2016-10-06T00:17:10Z stdout P c\n", Options{TailLines: ptr.To[int64](2)}, "b\nc"},
		{"timestamps on joined lines", sample, Options{Timestamps: true, TailLines: ptr.To[int64](3)},
			"2016-10-06T00:17:10Z second\n2016-10-06T00:17:11Z third\n2016-10-06T00:17:12Z fourth\n"},
		{"since drops earlier lines", sample, Options{Since: at("2016-10-06T00:17:10.050Z")}, "third\nfourth\n"},
		{"since keeps a line starting at it", sample, Options{Since: at("2016-10-06T00:17:10Z")}, "second\nthird\nfourth\n"},
		{"limitBytes cuts mid-line", sample, Options{LimitBytes: ptr.To[int64](9)}, "first\nsec"},
		{"limitBytes counts timestamps", sample, Options{LimitBytes: ptr.To[int64](25), Timestamps: true}, "2016-10-06T00:17:09.66979"},
		{"limitBytes at a line end", sample, Options{LimitBytes: ptr.To[int64](6)}, "first\n"},
		{"tail and limit", sample, Options{TailLines: ptr.To[int64](1), LimitBytes: ptr.To[int64](100)}, "fourth\n"},
		{"empty message", "2016-10-06T00:17:09Z stdout F\n2016-10-06T00:17:09Z stdout F x\n", Options{}, "\nx\n"},
		{"unterminated last line is not read", "2016-10-06T00:17:09Z stdout F a\n2016-10-06T00:17:09Z stdout F b", Options{}, "a\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := Read(context.Background(), writeLog(t, c.content), c.opts, &out, notRunning); err != nil {
				t.Fatal(err)
			}
			if out.String() != c.want {
				t.Errorf("got %q, want %q", out.String(), c.want)
			}
		})
	}
}

func TestParseLine(t *testing.T) {
	for _, bad := range []string{"", "2016-10-06T00:17:09Z", "yesterday stdout F x", "2016-10-06T00:17:09Z stdin F x", "2016-10-06T00:17:09Z stdout X x"} {
		if _, err := ParseLine([]byte(bad)); err == nil {
			t.Errorf("ParseLine(%q) succeeded", bad)
		}
	}
	e, err := ParseLine([]byte("2016-10-06T00:17:09.669794202Z stderr P a b "))
	if err != nil {
		t.Fatal(err)
	}
	if e.Stream != "stderr" || !e.Partial || string(e.Message) != "a b " || e.Time.Nanosecond() != 669794202 {
		t.Errorf("got %+v", e)
	}
}

func TestFromPodLogOptions(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := FromPodLogOptions(&corev1.PodLogOptions{SinceSeconds: ptr.To[int64](10), Follow: true}, now)
	if !o.Since.Equal(now.Add(-10*time.Second)) || !o.Follow {
		t.Errorf("got %+v", o)
	}
	o = FromPodLogOptions(&corev1.PodLogOptions{SinceTime: &metav1.Time{Time: now}}, now)
	if !o.Since.Equal(now) {
		t.Errorf("got %+v", o)
	}
}

// syncBuffer lets the test read what a follower has written so far.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFollow(t *testing.T) {
	p := writeLog(t, "2016-10-06T00:17:09Z stdout F one\n")
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var alive atomic.Bool
	alive.Store(true)
	running := func(context.Context) (bool, error) { return alive.Load(), nil }
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Read(context.Background(), p, Options{Follow: true}, &out, running) }()

	waitFor(t, "the first line", func() bool { return out.String() == "one\n" })
	// A line written in two writes arrives whole.
	f.WriteString("2016-10-06T00:17:10Z stdout P tw")
	time.Sleep(2 * pollInterval)
	f.WriteString("o...\n2016-10-06T00:17:10Z stdout F !\n")
	waitFor(t, "the appended line", func() bool { return out.String() == "one\ntwo...!\n" })

	// What the container wrote just before it stopped is still returned.
	f.WriteString("2016-10-06T00:17:11Z stdout F last\n")
	alive.Store(false)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end after the container stopped")
	}
	if got := out.String(); got != "one\ntwo...!\nlast\n" {
		t.Errorf("got %q", got)
	}
}

func TestFollowEndsWithContext(t *testing.T) {
	p := writeLog(t, "2016-10-06T00:17:09Z stdout F one\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var out syncBuffer
	go func() {
		done <- Read(ctx, p, Options{Follow: true}, &out, func(context.Context) (bool, error) { return true, nil })
	}()
	waitFor(t, "the first line", func() bool { return strings.Contains(out.String(), "one") })
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end with its context")
	}
}

func TestFollowRotation(t *testing.T) {
	p := writeLog(t, "2016-10-06T00:17:09Z stdout F old\n")
	var alive atomic.Bool
	alive.Store(true)
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Read(context.Background(), p, Options{Follow: true}, &out, func(context.Context) (bool, error) { return alive.Load(), nil })
	}()
	waitFor(t, "the first line", func() bool { return out.String() == "old\n" })
	if err := os.Rename(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("2016-10-06T00:17:10Z stdout F new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rotated file's line", func() bool { return out.String() == "old\nnew\n" })
	alive.Store(false)
	<-done
}
