package flowcontrol

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orca-project/orca/internal/flowcontrol/fairqueue"
	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) step(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// testDispatcher has one level, "users", with two seats that it neither
// lends nor borrows, for everyone in group "users".
func testDispatcher(t *testing.T, queues, handSize, queueLength int32) (*Dispatcher, *fakeClock, *prometheus.Registry) {
	t.Helper()
	clock := &fakeClock{now: time.Unix(1000, 0)}
	reg := prometheus.NewRegistry()
	// 3 seats: ceil(3×10/15) = 2 for users, 1 for catch-all.
	d, err := newDispatcher(3, reg, nil, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	pl := &flowcontrolv1.PriorityLevelConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "users", UID: "pl-uid"},
		Spec: flowcontrolv1.PriorityLevelConfigurationSpec{
			Type: flowcontrolv1.PriorityLevelEnablementLimited,
			Limited: &flowcontrolv1.LimitedPriorityLevelConfiguration{
				NominalConcurrencyShares: ptr.To[int32](10), LendablePercent: ptr.To[int32](0), BorrowingLimitPercent: ptr.To[int32](0),
				LimitResponse: flowcontrolv1.LimitResponse{Type: flowcontrolv1.LimitResponseTypeQueue,
					Queuing: &flowcontrolv1.QueuingConfiguration{Queues: queues, HandSize: handSize, QueueLengthLimit: queueLength}},
			},
		},
	}
	fs := registry.SuggestedFlowSchemas()[8].DeepCopy() // global-default's rules, ByUser
	fs.Name, fs.UID, fs.Spec.PriorityLevelConfiguration.Name = "users", "fs-uid", "users"
	fs.Spec.Rules[0].Subjects = []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindGroup, Group: &flowcontrolv1.GroupSubject{Name: "users"}}}
	d.update([]*flowcontrolv1.PriorityLevelConfiguration{pl}, []*flowcontrolv1.FlowSchema{fs})
	return d, clock, reg
}

func list(user string) Request {
	return Request{User: user, Groups: []string{"users"}, ResourceRequest: true, Verb: "list", Resource: "configmaps", Namespace: "default"}
}

// queued admits r in the background and returns once it waits.
type pending struct {
	done   chan struct{}
	ticket *Ticket
	reason fairqueue.Reason
}

func admitQueued(t *testing.T, ctx context.Context, d *Dispatcher, r Request) *pending {
	t.Helper()
	p := &pending{done: make(chan struct{})}
	inQueue := make(chan struct{})
	go func() {
		defer close(p.done)
		_, p.ticket, p.reason = d.Admit(ctx, r, Work{Seats: 1, Queued: func(in bool) {
			if in {
				close(inQueue)
			}
		}})
	}()
	select {
	case <-inQueue:
	case <-p.done:
		t.Fatalf("%s was not queued: %v", r.User, p.reason)
	}
	return p
}

func (p *pending) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		t.Fatal("request still waiting")
	}
}

func admitNow(t *testing.T, d *Dispatcher, r Request) (Classification, *Ticket) {
	t.Helper()
	cls, ticket, reason := d.Admit(context.Background(), r, Work{Seats: 1})
	if ticket == nil {
		t.Fatalf("%s refused: %s", r.User, reason)
	}
	return cls, ticket
}

// TestFairDispatch: a user with a backlog does not keep another user
// waiting behind it; the newcomer runs as soon as a seat frees.
func TestFairDispatch(t *testing.T) {
	d, _, reg := testDispatcher(t, 64, 1, 50)
	ctx := context.Background()
	cls, a1 := admitNow(t, d, list("alice"))
	if cls != (Classification{FlowSchema: "users", FlowSchemaUID: "fs-uid", PriorityLevel: "users", PriorityLevelUID: "pl-uid"}) {
		t.Fatalf("classification %+v", cls)
	}
	_, a2 := admitNow(t, d, list("alice"))
	a3 := admitQueued(t, ctx, d, list("alice"))
	a4 := admitQueued(t, ctx, d, list("alice"))
	b1 := admitQueued(t, ctx, d, list("bob"))
	a1.Finish()
	b1.wait(t)
	select {
	case <-a3.done:
		t.Fatal("alice's backlog went before bob")
	default:
	}
	a2.Finish()
	a3.wait(t)
	b1.ticket.Finish()
	a4.wait(t)
	a3.ticket.Finish()
	a4.ticket.Finish()
	a4.ticket.Finish() // a second Finish does nothing
	users := map[string]string{"priority_level": "users", "flow_schema": "users"}
	if got := metric(t, reg, "apiserver_flowcontrol_dispatched_requests_total", users); got != 5 {
		t.Errorf("dispatched %v, want 5", got)
	}
	if got := metric(t, reg, "apiserver_flowcontrol_current_executing_requests", users); got != 0 {
		t.Errorf("executing %v after all finished", got)
	}
	waited := map[string]string{"priority_level": "users", "flow_schema": "users", "execute": "true"}
	if got := metric(t, reg, "apiserver_flowcontrol_request_wait_duration_seconds", waited); got != 5 {
		t.Errorf("%v wait durations, want 5", got)
	}
}

func TestTimeOutInQueue(t *testing.T) {
	d, _, reg := testDispatcher(t, 64, 6, 50)
	admitNow(t, d, list("alice"))
	admitNow(t, d, list("alice"))
	ctx, cancel := context.WithCancel(context.Background())
	p := admitQueued(t, ctx, d, list("bob"))
	cancel()
	p.wait(t)
	if p.ticket != nil || p.reason != fairqueue.TimeOut {
		t.Fatalf("ticket %v, reason %q", p.ticket, p.reason)
	}
	if got := metric(t, reg, "apiserver_flowcontrol_rejected_requests_total", map[string]string{"priority_level": "users", "flow_schema": "users", "reason": "time-out"}); got != 1 {
		t.Errorf("time-out rejections %v", got)
	}
	if got := metric(t, reg, "apiserver_flowcontrol_current_inqueue_requests", map[string]string{"priority_level": "users", "flow_schema": "users"}); got != 0 {
		t.Errorf("in queue %v after the time-out", got)
	}
}

func TestQueueFull(t *testing.T) {
	d, _, _ := testDispatcher(t, 1, 1, 1)
	admitNow(t, d, list("alice"))
	admitNow(t, d, list("alice"))
	admitQueued(t, context.Background(), d, list("bob"))
	cls, ticket, reason := d.Admit(context.Background(), list("carol"), Work{Seats: 1})
	if ticket != nil || reason != fairqueue.QueueFull || cls.PriorityLevel != "users" {
		t.Fatalf("ticket %v, reason %q, %+v", ticket, reason, cls)
	}
	if d.RetryAfter("users") != 1 {
		t.Errorf("Retry-After %d", d.RetryAfter("users"))
	}
}

// TestExemptAndCatchAll: system:masters is never held back; a request of
// nobody known falls to catch-all, which refuses rather than queues.
func TestExemptAndCatchAll(t *testing.T) {
	d, _, _ := testDispatcher(t, 64, 6, 50)
	admin := Request{User: "system:admin", Groups: []string{"system:masters", "system:authenticated"}, Verb: "get", Path: "/metrics"}
	for range 20 {
		if cls, _ := admitNow(t, d, admin); cls.PriorityLevel != "exempt" || cls.FlowSchema != "exempt" || cls.PriorityLevelUID != "" {
			t.Fatalf("admin classified as %+v", cls)
		}
	}
	stranger := Request{User: "x", Groups: []string{"system:authenticated"}, Verb: "get", Path: "/version"}
	// catch-all has one seat (and borrows nothing while idle).
	cls, _ := admitNow(t, d, stranger)
	if cls.PriorityLevel != "catch-all" {
		t.Fatalf("stranger classified as %+v", cls)
	}
	if _, ticket, reason := d.Admit(context.Background(), stranger, Work{Seats: 1}); ticket != nil || reason != fairqueue.ConcurrencyLimit {
		t.Fatalf("second stranger: %v %q", ticket, reason)
	}
}

// TestWidthIsCapped: a request wider than the level allows is narrowed to
// its maximum width rather than left waiting for seats it cannot get.
func TestWidthIsCapped(t *testing.T) {
	d, _, _ := testDispatcher(t, 64, 1, 50)
	_, ticket, reason := d.Admit(context.Background(), list("alice"), Work{Seats: 10})
	if ticket == nil {
		t.Fatal(reason)
	}
	if ticket.req.Seats != 1 { // max(1, min(ceil(2×0.15), 2/1))
		t.Errorf("width %d, want 1", ticket.req.Seats)
	}
}

// TestBorrowing: a level whose demand stays above its share borrows what
// an idle level may lend, at the next adjustment.
func TestBorrowing(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	d, err := newDispatcher(600, prometheus.NewRegistry(), nil, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	d.update(append(registry.MandatoryPriorityLevelConfigurations(), registry.SuggestedPriorityLevelConfigurations()...),
		append(registry.MandatoryFlowSchemas(), registry.SuggestedFlowSchemas()...))
	gd := d.cur.Load().levels["global-default"]
	before := gd.currentCL
	// Every seat it has stays taken through the period.
	var tickets []*Ticket
	for range before {
		_, ticket := admitNow(t, d, list("alice").withGroups("system:authenticated"))
		tickets = append(tickets, ticket)
	}
	clock.step(adjustPeriod)
	d.adjust()
	if gd.currentCL <= before || gd.currentCL <= gd.spec.nominalCL {
		t.Errorf("global-default at %d seats (was %d, nominal %d) after a busy period", gd.currentCL, before, gd.spec.nominalCL)
	}
	for _, ticket := range tickets {
		ticket.Finish()
	}
}

func (r Request) withGroups(g ...string) Request {
	r.Groups = g
	return r
}

// metric reads one series: a counter's or gauge's value, a histogram's
// count.
func metric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if v, ok := labels[l.GetName()]; ok && v != l.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return 0
}
