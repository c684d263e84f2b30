package simnode

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestPool(t *testing.T) {
	cases := []struct {
		name string
		cidr string
		// steps: "a UID" allocates, "h UID IP" holds, "r UID" releases;
		// want is each step's result ("" for a release, "ok"/"no" for a hold).
		steps, want []string
	}{
		{"first addresses after the gateway", "10.42.3.0/24",
			[]string{"a p1", "a p2", "a p1"}, []string{"10.42.3.2", "10.42.3.3", "10.42.3.2"}},
		{"held address is skipped", "10.42.3.0/24",
			[]string{"h p1 10.42.3.2", "a p2"}, []string{"ok", "10.42.3.3"}},
		{"hold outside the range or taken is refused", "10.42.3.0/24",
			[]string{"h p1 10.42.4.2", "h p1 10.42.3.9", "h p2 10.42.3.9"}, []string{"no", "ok", "no"}},
		{"released address is given again after the others", "10.42.3.0/30",
			[]string{"a p1", "a p2", "r p1", "a p3"}, []string{"10.42.3.2", "error", "", "10.42.3.2"}},
		{"no broadcast address in IPv4", "10.42.3.0/29",
			[]string{"a p1", "a p2", "a p3", "a p4", "a p5", "a p6"}, []string{"10.42.3.2", "10.42.3.3", "10.42.3.4", "10.42.3.5", "10.42.3.6", "error"}},
		{"IPv6 range", "fd00:42::/120",
			[]string{"a p1"}, []string{"fd00:42::2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPool(tc.cidr)
			if err != nil {
				t.Fatal(err)
			}
			for i, step := range tc.steps {
				var op, uid, ip, got string
				fmt.Sscan(step, &op, &uid, &ip)
				switch op {
				case "a":
					if got, err = p.Allocate(types.UID(uid)); err != nil {
						got = "error"
					}
				case "h":
					got = map[bool]string{true: "ok", false: "no"}[p.Hold(types.UID(uid), ip)]
				case "r":
					p.Release(types.UID(uid))
				}
				if got != tc.want[i] {
					t.Errorf("step %d %q = %q, want %q", i, step, got, tc.want[i])
				}
			}
		})
	}
}

func TestNewPoolRejects(t *testing.T) {
	for _, cidr := range []string{"", "10.42.0.0", "10.42.0.0/31"} {
		if _, err := NewPool(cidr); err == nil {
			t.Errorf("NewPool(%q) accepted", cidr)
		}
	}
}
