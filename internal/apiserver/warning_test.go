package apiserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/orca-project/orca/internal/admission"
)

func TestWarningRecorder(t *testing.T) {
	long := strings.Repeat("x", 3000)
	for _, tc := range []struct {
		name string
		add  []string
		want []string
	}{
		{name: "once each, in order", add: []string{"b", "a", "b", ""}, want: []string{`299 - "b"`, `299 - "a"`}},
		{name: "quotes escaped", add: []string{`say "hi"`}, want: []string{`299 - "say \"hi\""`}},
		{
			name: "past the limit every warning is cut to 256 runes",
			add:  []string{"short", long, long + "y"},
			want: []string{`299 - "short"`, `299 - "` + long[:256] + `"`, `299 - "` + long[:256] + `"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			ctx := withWarnings(context.Background(), rec.Header())
			for _, text := range tc.add {
				admission.AddWarning(ctx, text)
			}
			got := rec.Header().Values("Warning")
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("headers\n got %q\nwant %q", got, tc.want)
			}
		})
	}
	// Without a recorder, warnings go nowhere.
	admission.AddWarning(context.Background(), "lost")
}
