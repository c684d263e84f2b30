package explain

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/orca-project/orca/internal/scheduler/framework"
)

// Encode renders e as compact JSON of at most maxBytes, dropping nodes
// from the ends of the rejected and scored lists (and counting them as
// omitted) until it fits. The counts by reason and the verdict are never
// dropped; they are bounded by the number of distinct reasons.
func Encode(e *Explanation, maxBytes int) ([]byte, error) {
	c := *e
	for {
		b, err := json.Marshal(&c)
		if err != nil {
			return nil, fmt.Errorf("encode explanation: %w", err)
		}
		if len(b) <= maxBytes {
			return b, nil
		}
		if len(c.Rejected) == 0 && len(c.Scored) == 0 {
			return nil, fmt.Errorf("explanation of %s takes %d bytes without its node lists, more than %d", e.Pod, len(b), maxBytes)
		}
		// Halve the longer list: a few passes reach any bound.
		if len(c.Rejected) >= len(c.Scored) {
			keep := len(c.Rejected) / 2
			c.RejectedOmitted += len(c.Rejected) - keep
			c.Rejected = c.Rejected[:keep:keep]
		} else {
			keep := len(c.Scored) / 2
			c.ScoredOmitted += len(c.Scored) - keep
			c.Scored = c.Scored[:keep:keep]
		}
	}
}

// Decode parses an annotation's value.
func Decode(s string) (*Explanation, error) {
	var e Explanation
	if err := json.Unmarshal([]byte(s), &e); err != nil {
		return nil, fmt.Errorf("decode explanation: %w", err)
	}
	if e.Version != Version {
		return nil, fmt.Errorf("explanation schema version %d, this build reads %d", e.Version, Version)
	}
	return &e, nil
}

// ListCap is the list bound the request annotation's value asks for, and
// whether it asks at all.
func ListCap(annotations map[string]string) (int, bool) {
	switch strings.ToLower(annotations[RequestAnnotation]) {
	case "true":
		return DefaultListCap, true
	case "full":
		return 0, true
	}
	return 0, false
}

// SameVerdict reports whether the pod's annotation already holds this
// verdict, so a Pending pod's annotation is rewritten only when the
// result of its attempts changes.
func SameVerdict(annotation string, e *Explanation) bool {
	old, err := Decode(annotation)
	return err == nil && old.UID == e.UID && old.Result == e.Result && old.Node == e.Node && old.Message == e.Message
}

// TopSuffix is what the Scheduled event adds after upstream's
// "Successfully assigned NS/POD to NODE": " (top: n3 312, n1 298, n7 290)",
// or " (the only feasible node)" when nothing needed ranking.
func TopSuffix(top []framework.NodeScore) string {
	if len(top) == 0 {
		return " (the only feasible node)"
	}
	parts := make([]string, len(top))
	for i, n := range top {
		parts[i] = n.Name + " " + strconv.FormatInt(n.Score, 10)
	}
	return " (top: " + strings.Join(parts, ", ") + ")"
}
