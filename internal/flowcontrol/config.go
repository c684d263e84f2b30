package flowcontrol

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orca-project/orca/internal/flowcontrol/fairqueue"
	registry "github.com/orca-project/orca/internal/registry/flowcontrol"
)

// maxSeatsFraction caps a request's width at this share of its level's
// nominal seats, as upstream's priorityLevelMaxSeatsPercent.
const maxSeatsFraction = 0.15

// levelSpec is what a priority level's object and the server's limit make
// of it.
type levelSpec struct {
	pl *flowcontrolv1.PriorityLevelConfiguration
	// queuing is the level's fair-queuing configuration without its
	// concurrency limit, which borrowing moves.
	queuing fairqueue.Config
	// nominalCL is the level's share of the server's seats; minCL what it
	// keeps however little it uses; maxCL what it may reach by borrowing.
	nominalCL, minCL, maxCL int
	// maxSeats caps the width of the level's requests; 0 leaves it to the
	// width estimate's own cap.
	maxSeats int
}

// plan is a digested configuration: the schemas in matching order and
// the levels they use.
type plan struct {
	schemas []*flowcontrolv1.FlowSchema
	levels  map[string]levelSpec
	// nominalSum is what the levels' nominal seats add up to (rounding
	// makes it at least the server's limit).
	nominalSum int
	// conditions are the Dangling conditions whose values must change.
	conditions []conditionUpdate
}

// conditionUpdate is a FlowSchema's Dangling condition to write.
type conditionUpdate struct {
	schema    string
	condition flowcontrolv1.FlowSchemaCondition
}

// makePlan digests the API objects as upstream's config controller does.
// A level whose spec is broken is ignored; a schema whose level is missing
// or ignored is dangling and matches nothing; the mandatory exempt and
// catch-all levels and schemas are imagined when their objects are
// missing, so every request always has somewhere to go.
func makePlan(pls []*flowcontrolv1.PriorityLevelConfiguration, fss []*flowcontrolv1.FlowSchema, serverCL int, now time.Time) plan {
	p := plan{levels: map[string]levelSpec{}}
	var shares float64
	add := func(pl *flowcontrolv1.PriorityLevelConfiguration) {
		cfg, err := queuingOf(pl)
		if err != nil {
			return
		}
		p.levels[pl.Name] = levelSpec{pl: pl, queuing: cfg}
		shares += float64(nominalShares(pl))
	}
	for _, pl := range pls {
		add(pl)
	}
	for _, mand := range registry.MandatoryPriorityLevelConfigurations() {
		if _, ok := p.levels[mand.Name]; !ok {
			add(mand)
		}
	}

	var haveExempt, haveCatchAll bool
	for _, fs := range fss {
		_, found := p.levels[fs.Spec.PriorityLevelConfiguration.Name]
		if u, change := danglingCondition(fs, !found, now); change {
			p.conditions = append(p.conditions, u)
		}
		if !found {
			continue
		}
		p.schemas = append(p.schemas, fs)
		haveExempt = haveExempt || fs.Name == flowcontrolv1.FlowSchemaNameExempt
		haveCatchAll = haveCatchAll || fs.Name == flowcontrolv1.FlowSchemaNameCatchAll
	}
	slices.SortStableFunc(p.schemas, func(a, b *flowcontrolv1.FlowSchema) int {
		if registry.MatchesBefore(a, b) {
			return -1
		}
		if registry.MatchesBefore(b, a) {
			return 1
		}
		return 0
	})
	for _, mand := range registry.MandatoryFlowSchemas() {
		switch {
		case mand.Name == flowcontrolv1.FlowSchemaNameExempt && !haveExempt:
			p.schemas = append([]*flowcontrolv1.FlowSchema{mand}, p.schemas...)
		case mand.Name == flowcontrolv1.FlowSchemaNameCatchAll && !haveCatchAll:
			p.schemas = append(p.schemas, mand)
		}
	}

	for name, l := range p.levels {
		nominal := 0
		if shares > 0 {
			nominal = int(math.Ceil(float64(serverCL) * float64(nominalShares(l.pl)) / shares))
		}
		lendable, borrowing := 0, serverCL
		lendPct, borrowPct := percents(l.pl)
		if lendPct != nil {
			lendable = int(math.Round(float64(nominal) * float64(*lendPct) / 100))
		}
		if borrowPct != nil {
			borrowing = int(math.Round(float64(nominal) * float64(*borrowPct) / 100))
		}
		l.nominalCL, l.minCL, l.maxCL = nominal, nominal-lendable, nominal+borrowing
		if q := l.queuing; !q.Exempt && q.Queues > 0 {
			l.maxSeats = max(1, min(int(math.Ceil(float64(nominal)*maxSeatsFraction)), nominal/q.HandSize))
		}
		p.levels[name] = l
		p.nominalSum += nominal
	}
	return p
}

// queuingOf reads a level's fair-queuing configuration, refusing the
// broken specs upstream ignores.
func queuingOf(pl *flowcontrolv1.PriorityLevelConfiguration) (fairqueue.Config, error) {
	s := pl.Spec
	switch {
	case (s.Type == flowcontrolv1.PriorityLevelEnablementLimited) != (s.Limited != nil):
		return fairqueue.Config{}, errors.New("broken union structure at the top, for Limited")
	case (s.Type == flowcontrolv1.PriorityLevelEnablementExempt) != (s.Exempt != nil):
		return fairqueue.Config{}, errors.New("broken union structure at the top, for Exempt")
	case (s.Type == flowcontrolv1.PriorityLevelEnablementExempt) != (pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt):
		return fairqueue.Config{}, errors.New("non-alignment between name and type")
	case s.Exempt != nil:
		return fairqueue.Config{Exempt: true}, nil
	}
	lr := s.Limited.LimitResponse
	if (lr.Type == flowcontrolv1.LimitResponseTypeReject) != (lr.Queuing == nil) {
		return fairqueue.Config{}, errors.New("broken union structure for limit response")
	}
	q := lr.Queuing
	if q == nil {
		return fairqueue.Config{}, nil
	}
	if q.Queues <= 0 || q.HandSize <= 0 || q.HandSize > q.Queues || q.QueueLengthLimit <= 0 ||
		fairqueue.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > fairqueue.MaxHashBits {
		return fairqueue.Config{}, fmt.Errorf("invalid queuing %+v", *q)
	}
	return fairqueue.Config{Queues: int(q.Queues), HandSize: int(q.HandSize), QueueLengthLimit: int(q.QueueLengthLimit)}, nil
}

func nominalShares(pl *flowcontrolv1.PriorityLevelConfiguration) int32 {
	var p *int32
	if l := pl.Spec.Limited; l != nil {
		p = l.NominalConcurrencyShares
	} else if e := pl.Spec.Exempt; e != nil {
		p = e.NominalConcurrencyShares
	}
	if p == nil {
		return 0
	}
	return *p
}

// percents returns a level's lendable and borrowing-limit percentages;
// an exempt level never borrows.
func percents(pl *flowcontrolv1.PriorityLevelConfiguration) (lendable, borrowing *int32) {
	if l := pl.Spec.Limited; l != nil {
		return l.LendablePercent, l.BorrowingLimitPercent
	}
	return pl.Spec.Exempt.LendablePercent, nil
}

// danglingCondition returns the Dangling condition fs should carry, and
// whether it differs from the one it has.
func danglingCondition(fs *flowcontrolv1.FlowSchema, dangling bool, now time.Time) (conditionUpdate, bool) {
	level := fs.Spec.PriorityLevelConfiguration.Name
	want := flowcontrolv1.FlowSchemaCondition{
		Type:    flowcontrolv1.FlowSchemaConditionDangling,
		Status:  flowcontrolv1.ConditionFalse,
		Reason:  "Found",
		Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", level),
	}
	if dangling {
		want.Status, want.Reason = flowcontrolv1.ConditionTrue, "NotFound"
		want.Message = fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", level)
	}
	for _, c := range fs.Status.Conditions {
		if c.Type == want.Type && c.Status == want.Status && c.Reason == want.Reason && c.Message == want.Message {
			return conditionUpdate{}, false
		}
	}
	want.LastTransitionTime = metav1.NewTime(now)
	return conditionUpdate{schema: fs.Name, condition: want}, true
}
