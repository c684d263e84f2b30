package logrotate

import (
	"reflect"
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 5, 0, time.UTC)
	const log = "/logs/ns_p_uid/c/0.log"
	p := Policy{MaxSize: 1 << 20, MaxFiles: 3}
	for _, tc := range []struct {
		name    string
		size    int64
		rotated []string
		want    Actions
	}{
		{name: "under the maximum size: nothing", size: 1<<20 - 1, rotated: []string{log + ".20261128-000000"}},
		{name: "first rotation", size: 1 << 20,
			want: Actions{Rotate: log + ".20261129-000005"}},
		{name: "the previous rotated file is compressed before the next rotation", size: 2 << 20,
			rotated: []string{log + ".20261129-000000"},
			want:    Actions{Compress: []string{log + ".20261129-000000"}, Rotate: log + ".20261129-000005"}},
		{name: "beyond max files the oldest go", size: 2 << 20,
			rotated: []string{log + ".20261128-235950.gz", log + ".20261129-000000", log + ".20261128-235940.gz"},
			want: Actions{Remove: []string{log + ".20261128-235940.gz", log + ".20261128-235950.gz"},
				Compress: []string{log + ".20261129-000000"}, Rotate: log + ".20261129-000005"}},
		{name: "leftovers of an interrupted compression are cleaned up", size: 2 << 20,
			rotated: []string{log + ".20261129-000000", log + ".20261129-000000.gz", log + ".20261128-000000.gz.tmp"},
			want: Actions{Remove: []string{log + ".20261129-000000", log + ".20261128-000000.gz.tmp"},
				Rotate: log + ".20261129-000005"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Plan(p, log, tc.size, tc.rotated, now); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("plan\n%+v, want\n%+v", got, tc.want)
			}
		})
	}
}
