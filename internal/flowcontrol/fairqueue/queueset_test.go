package fairqueue

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// transcript drives a QueueSet with a fake clock. Each line is one call
// and what it must return:
//
//	arrive ID HASH [seats=N] [+DUR] => STARTED... | refused REASON
//	finish ID [+DUR]                => STARTED...
//	cancel ID [+DUR]                => removed|running STARTED...
//	limit N [+DUR]                  => STARTED...
//
// +DUR advances the clock before the call. STARTED lists the requests the
// call started, in order.
func transcript(t *testing.T, cfg Config, lines ...string) {
	t.Helper()
	now := time.Unix(1000, 0)
	qs := New[string](cfg, now)
	reqs := map[string]*Request[string]{}
	names := func(rs []*Request[string]) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Item)
		}
		return strings.Join(out, " ")
	}
	for n, line := range lines {
		call, want, ok := strings.Cut(line, "=>")
		if !ok {
			t.Fatalf("line %d: no =>", n+1)
		}
		want = strings.Join(strings.Fields(want), " ")
		f := strings.Fields(call)
		var args []string
		seats := 1
		for _, a := range f[1:] {
			switch {
			case strings.HasPrefix(a, "+"):
				d, err := time.ParseDuration(a[1:])
				if err != nil {
					t.Fatalf("line %d: %v", n+1, err)
				}
				now = now.Add(d)
			case strings.HasPrefix(a, "seats="):
				seats, _ = strconv.Atoi(strings.TrimPrefix(a, "seats="))
			default:
				args = append(args, a)
			}
		}
		var got string
		switch f[0] {
		case "arrive":
			hash, _ := strconv.ParseUint(args[1], 10, 64)
			r := &Request[string]{Item: args[0], Seats: seats, Hash: hash}
			reqs[args[0]] = r
			started, refused := qs.Arrive(now, r)
			got = names(started)
			if refused != "" {
				got = "refused " + string(refused)
			}
		case "finish":
			got = names(qs.Finish(now, reqs[args[0]]))
		case "cancel":
			removed, started := qs.Cancel(now, reqs[args[0]])
			got = "running"
			if removed {
				got = "removed"
			}
			got = strings.TrimSpace(got + " " + names(started))
		case "limit":
			c := qs.Config()
			c.ConcurrencyLimit, _ = strconv.Atoi(args[0])
			got = names(qs.Reconfigure(now, c))
		default:
			t.Fatalf("line %d: unknown call %q", n+1, f[0])
		}
		if got != want {
			t.Fatalf("line %d: %s\n got: %q\nwant: %q", n+1, strings.TrimSpace(call), got, want)
		}
	}
}

// Hands of one card make a flow's queue its hash modulo the queue count.
var oneCardEach = Config{Queues: 8, HandSize: 1, QueueLengthLimit: 50, ConcurrencyLimit: 1}

func TestTranscripts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		lines []string
	}{{
		name: "exempt levels start everything",
		cfg:  Config{Exempt: true},
		lines: []string{
			"arrive a 0 seats=5 => a",
			"arrive b 0         => b",
			"finish a           => ",
		},
	}, {
		name: "a level without queues refuses once its seats are taken",
		cfg:  Config{ConcurrencyLimit: 2},
		lines: []string{
			"arrive a 0 => a",
			"arrive b 7 => b",
			"arrive c 3 => refused concurrency-limit",
			"finish a   => ",
			"arrive d 3 => d",
		},
	}, {
		name: "a full queue refuses only while every seat is taken",
		cfg:  Config{Queues: 1, HandSize: 1, QueueLengthLimit: 2, ConcurrencyLimit: 1},
		lines: []string{
			"arrive a 0 => a",
			"arrive b 0 => ",
			"arrive c 0 => ",
			"arrive d 0 => refused queue-full",
			"finish a   => b",
			"arrive e 0 => ",
		},
	}, {
		name: "a newcomer goes before a backlog",
		cfg:  oneCardEach,
		lines: []string{
			"arrive x1 0 => x1",
			"arrive x2 0 => ",
			"arrive x3 0 => ",
			"arrive x4 0 => ",
			"arrive y1 1 => ",
			"finish x1 +3ms => y1",
			"finish y1 +3ms => x2",
		},
	}, {
		name: "two backlogged flows alternate",
		cfg:  oneCardEach,
		lines: []string{
			"arrive x1 0 => x1",
			"arrive x2 0 => ", "arrive x3 0 => ", "arrive x4 0 => ",
			"arrive y1 1 => ", "arrive y2 1 => ", "arrive y3 1 => ",
			"finish x1 +3ms => y1",
			"finish y1 +3ms => x2",
			"finish x2 +3ms => y2",
			"finish y2 +3ms => x3",
			"finish x3 +3ms => y3",
			"finish y3 +3ms => x4",
		},
	}, {
		// Flow x's first request takes 31 ms, y's 3 ms: x is charged its
		// real time, so y runs eleven requests before x's next.
		name: "long requests cost their flow its turns",
		cfg:  oneCardEach,
		lines: []string{
			"arrive x1 0 => x1",
			"arrive x2 0 => ",
			"arrive y1 1 => ", "arrive y2 1 => ", "arrive y3 1 => ", "arrive y4 1 => ",
			"arrive y5 1 => ", "arrive y6 1 => ", "arrive y7 1 => ", "arrive y8 1 => ",
			"arrive y9 1 => ", "arrive y10 1 => ", "arrive y11 1 => ", "arrive y12 1 => ",
			"finish x1 +31ms => y1",
			"finish y1 +3ms => y2", "finish y2 +3ms => y3", "finish y3 +3ms => y4",
			"finish y4 +3ms => y5", "finish y5 +3ms => y6", "finish y6 +3ms => y7",
			"finish y7 +3ms => y8", "finish y8 +3ms => y9", "finish y9 +3ms => y10",
			"finish y10 +3ms => y11",
			"finish y11 +3ms => x2",
		},
	}, {
		// x was alone for a long while: once y arrives, y is served next
		// but gets no credit for the time it sent nothing.
		name: "idle time earns no credit",
		cfg:  oneCardEach,
		lines: []string{
			"arrive x1 0 => x1",
			"arrive x2 0 => ", "arrive x3 0 => ", "arrive x4 0 => ",
			"finish x1 +1s => x2",
			"arrive y1 1 +1s => ", "arrive y2 1 => ", "arrive y3 1 => ",
			"finish x2 +3ms => y1",
			"finish y1 +3ms => x3",
			"finish x3 +3ms => y2",
		},
	}, {
		// b is the oldest request in virtual time but needs three seats:
		// narrower c, arriving later, does not overtake it.
		name: "a wide request waits for its seats and is not overtaken",
		cfg:  Config{Queues: 8, HandSize: 1, QueueLengthLimit: 50, ConcurrencyLimit: 4},
		lines: []string{
			"arrive a 0 seats=3 => a",
			"arrive b 1 seats=3 => ",
			"arrive c 2 +30ms => ",
			"finish a +3ms => b c",
		},
	}, {
		name: "a request wider than the limit runs alone",
		cfg:  Config{Queues: 8, HandSize: 1, QueueLengthLimit: 50, ConcurrencyLimit: 2},
		lines: []string{
			"arrive a 0 => a",
			"arrive b 1 seats=5 => ",
			"finish a +3ms => b",
			"arrive c 2 => ",
			"finish b +3ms => c",
		},
	}, {
		name: "a cancelled request leaves its queue, a started one runs",
		cfg:  oneCardEach,
		lines: []string{
			"arrive a 0 => a",
			"arrive b 1 => ",
			"arrive c 2 => ",
			"cancel b +1s => removed",
			"cancel a => running",
			"finish a => c",
			"arrive d 1 => ",
		},
	}, {
		name: "cancelling a wide head lets narrower requests through",
		cfg:  Config{Queues: 8, HandSize: 1, QueueLengthLimit: 50, ConcurrencyLimit: 2},
		lines: []string{
			"arrive a 0 => a",
			"arrive b 1 seats=2 => ",
			"arrive c 2 +30ms => ",
			"cancel b => removed c",
		},
	}, {
		name: "a higher limit starts waiting requests",
		cfg:  oneCardEach,
		lines: []string{
			"arrive a 0 => a",
			"arrive b 1 => ",
			"arrive c 2 => ",
			"limit 3 => b c",
			"limit 1 => ",
			"finish a => ",
			"arrive d 3 => ",
			"finish b => ",
			"finish c => d",
		},
	}} {
		t.Run(tc.name, func(t *testing.T) { transcript(t, tc.cfg, tc.lines...) })
	}
}

// TestShuffleSharding: a flow whose hand holds two queues spreads over
// both, so against a flow with one queue it gets two turns in three, and
// a flow whose hand shares a queue with it picks its other, empty one.
func TestShuffleSharding(t *testing.T) {
	now := time.Unix(1000, 0)
	cfg := Config{Queues: 16, HandSize: 2, QueueLengthLimit: 100, ConcurrencyLimit: 1}
	qs := New[string](cfg, now)
	noisy, quiet := flowWithHand(t, 16, 2, 3, 4), flowWithHand(t, 16, 2, 4, 9)
	var running *Request[string]
	arrive := func(flow string, hash uint64) {
		started, refused := qs.Arrive(now, &Request[string]{Item: flow, Seats: 1, Hash: hash})
		if refused != "" {
			t.Fatalf("%s refused: %s", flow, refused)
		}
		if len(started) == 1 {
			running = started[0]
		}
	}
	for range 60 {
		arrive("noisy", noisy)
	}
	for range 30 {
		arrive("quiet", quiet)
	}
	// The quiet flow shares queue 4 with the noisy one but joins queue 9,
	// which holds nothing.
	if got := len(qs.queues[9].waiting); got != 30 {
		t.Fatalf("quiet flow's queue holds %d, want 30", got)
	}
	if a, b := len(qs.queues[3].waiting), len(qs.queues[4].waiting); a+b != 59 || a-b > 1 || b-a > 1 {
		t.Fatalf("noisy flow's queues hold %d and %d, want an even split of 59", a, b)
	}
	served := map[string]int{}
	for range 60 {
		now = now.Add(3 * time.Millisecond)
		next := qs.Finish(now, running)
		if len(next) != 1 {
			t.Fatalf("finish started %d", len(next))
		}
		running = next[0]
		served[running.Item]++
	}
	if served["noisy"] != 40 || served["quiet"] != 20 {
		t.Errorf("served %v, want noisy 40 and quiet 20", served)
	}
}

// flowWithHand finds a hash whose hand is exactly the given queues.
func flowWithHand(t *testing.T, deck, handSize int, want ...int) uint64 {
	t.Helper()
	for h := uint64(0); h < 1<<20; h++ {
		hand := deal(h, deck, handSize, nil)
		if fmt.Sprint(hand) == fmt.Sprint(want) {
			return h
		}
	}
	t.Fatalf("no hash deals %v", want)
	return 0
}

func TestStatsAndIdle(t *testing.T) {
	now := time.Unix(1000, 0)
	qs := New[int](Config{Queues: 4, HandSize: 2, QueueLengthLimit: 10, ConcurrencyLimit: 3}, now)
	a := &Request[int]{Seats: 2}
	b := &Request[int]{Seats: 2, Hash: 5}
	qs.Arrive(now, a)
	qs.Arrive(now, b)
	if got, want := qs.Stats(), (Stats{Waiting: 1, Executing: 1, SeatsWaiting: 2, SeatsInUse: 2}); got != want {
		t.Fatalf("stats = %+v, want %+v", got, want)
	}
	if !a.Executing() || !b.Waiting() || qs.Idle() {
		t.Fatal("states")
	}
	qs.Finish(now, a)
	qs.Finish(now, b)
	if !qs.Idle() {
		t.Fatal("not idle after both finished")
	}
}

// TestFewerQueues: queues beyond a reduced count go once they empty.
func TestFewerQueues(t *testing.T) {
	now := time.Unix(1000, 0)
	cfg := Config{Queues: 4, HandSize: 1, QueueLengthLimit: 10, ConcurrencyLimit: 1}
	qs := New[string](cfg, now)
	a := &Request[string]{Item: "a", Hash: 3}
	b := &Request[string]{Item: "b", Hash: 3}
	qs.Arrive(now, a)
	qs.Arrive(now, b)
	cfg.Queues = 2
	qs.Reconfigure(now, cfg)
	if len(qs.queues) != 4 {
		t.Fatalf("busy queue dropped: %d queues", len(qs.queues))
	}
	if s := qs.Finish(now, a); len(s) != 1 || s[0] != b {
		t.Fatalf("b not started from the surplus queue: %v", s)
	}
	qs.Finish(now, b)
	if len(qs.queues) != 2 {
		t.Fatalf("%d queues after the surplus emptied, want 2", len(qs.queues))
	}
}

func TestVirtualTimeRebase(t *testing.T) {
	now := time.Unix(1000, 0)
	qs := New[string](oneCardEach, now)
	x := &Request[string]{Item: "x"}
	qs.Arrive(now, x)
	y := &Request[string]{Item: "y", Hash: 1}
	qs.Arrive(now, y)
	// One busy queue at one seat advances R one seat-second a second.
	now = now.Add(rebaseAt * time.Second)
	qs.advance(now)
	if qs.currentR >= rebaseAt || qs.currentR <= 0 {
		t.Fatalf("R = %v, not rebased", qs.currentR)
	}
	if y.arrivalR > qs.currentR {
		t.Fatalf("arrival %v after now %v", y.arrivalR, qs.currentR)
	}
	if s := qs.Finish(now, x); len(s) != 1 || s[0] != y {
		t.Fatal("y not started after the rebase")
	}
}
