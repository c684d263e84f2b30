package apiserver

import (
	"context"
	"net/http"
	"sync"
	"unicode/utf8"

	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/orca-project/orca/internal/admission"
)

// Upstream's limits on warning headers: past 4096 runes in all, every
// warning is cut to 256 runes, so a request with many warnings (a
// namespace whose existing pods violate its new level) still gets a
// response its client can read.
const (
	warningTotalRunes = 4 * 1024
	warningItemRunes  = 256
)

// withWarnings lets code on the request path (admission plugins) add
// Warning headers to the response's header, as upstream's
// WithWarningRecorder: each text once, in the order given, within
// upstream's size limits. withRequestStart sets it up.
func withWarnings(ctx context.Context, header http.Header) context.Context {
	rec := &warningRecorder{header: header}
	return admission.WithWarnings(ctx, rec.add)
}

type warningRecorder struct {
	mu         sync.Mutex
	header     http.Header
	seen       map[string]bool
	ordered    []string
	written    int
	truncating bool
}

// add writes text as a Warning header unless it was written before. An
// update retried after a conflict runs admission again; its warnings are
// still given once.
func (r *warningRecorder) add(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.truncating && r.written >= warningTotalRunes {
		return
	}
	if r.seen[text] {
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[text] = true
	r.ordered = append(r.ordered, text)
	n := utf8.RuneCountInString(text)
	if r.truncating || r.written+n <= warningTotalRunes {
		r.write(text)
		return
	}
	// Over the limit: start again with every warning cut short.
	r.truncating = true
	r.written = 0
	r.header.Del("Warning")
	for _, t := range r.ordered {
		r.write(t)
	}
}

func (r *warningRecorder) write(text string) {
	if r.truncating && utf8.RuneCountInString(text) > warningItemRunes {
		text = string([]rune(text)[:warningItemRunes])
	}
	h, err := utilnet.NewWarningHeader(299, "-", text)
	if err != nil {
		return
	}
	r.written += utf8.RuneCountInString(text)
	r.header.Add("Warning", h)
}
