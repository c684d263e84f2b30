package serverlb

import (
	"slices"
	"testing"
)

func TestOrder(t *testing.T) {
	abc := []string{"a:1", "b:1", "c:1"}
	down := func(s ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	tests := []struct {
		name string
		c    choice
		want []string
	}{
		{"empty list: the default alone",
			choice{fallback: "d:1"}, []string{"d:1"}},
		{"empty list, default down: still the default",
			choice{down: down("d:1"), fallback: "d:1"}, []string{"d:1"}},
		{"no current: healthy in list order, then the default",
			choice{servers: abc, fallback: "d:1"}, []string{"a:1", "b:1", "c:1", "d:1"}},
		{"healthy current sticks",
			choice{servers: abc, current: "b:1", fallback: "d:1"}, []string{"b:1", "a:1", "c:1", "d:1"}},
		{"unhealthy current goes last among the listed",
			choice{servers: abc, down: down("b:1"), current: "b:1", fallback: "d:1"}, []string{"a:1", "c:1", "d:1", "b:1"}},
		{"current no longer listed is not preferred",
			choice{servers: abc, current: "x:1", fallback: "d:1"}, []string{"a:1", "b:1", "c:1", "d:1"}},
		{"current the unlisted default: listed servers first",
			choice{servers: abc, current: "d:1", fallback: "d:1"}, []string{"a:1", "b:1", "c:1", "d:1"}},
		{"listed default keeps its place, once",
			choice{servers: abc, fallback: "b:1"}, []string{"a:1", "b:1", "c:1"}},
		{"listed default sticks as current",
			choice{servers: abc, current: "c:1", fallback: "c:1"}, []string{"c:1", "a:1", "b:1"}},
		{"listed default down: with the unhealthy",
			choice{servers: abc, down: down("a:1"), fallback: "a:1"}, []string{"b:1", "c:1", "a:1"}},
		{"all listed down: the default before them",
			choice{servers: abc, down: down("a:1", "b:1", "c:1"), current: "a:1", fallback: "d:1"}, []string{"d:1", "a:1", "b:1", "c:1"}},
		{"unlisted default down: last of all",
			choice{servers: abc, down: down("b:1", "d:1"), fallback: "d:1"}, []string{"a:1", "c:1", "b:1", "d:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := order(tt.c); !slices.Equal(got, tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHealthObserve(t *testing.T) {
	tests := []struct {
		name   string
		checks []bool
		want   health
	}{
		{"never checked", nil, health{}},
		{"one failure is not down", []bool{false}, health{fails: 1}},
		{"two failures in a row", []bool{false, false}, health{fails: 2, down: true}},
		{"a success in between resets", []bool{false, true, false}, health{fails: 1}},
		{"a success brings a down server back", []bool{false, false, false, true}, health{}},
		{"stays down", []bool{false, false, false}, health{fails: 3, down: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h health
			for _, ok := range tt.checks {
				h = h.observe(ok)
			}
			if h != tt.want {
				t.Errorf("after %v: %+v, want %+v", tt.checks, h, tt.want)
			}
		})
	}
}

func TestServerAddr(t *testing.T) {
	tests := []struct {
		url, want string
		err       bool
	}{
		{"https://10.0.0.1:6443", "10.0.0.1:6443", false},
		{"https://api.example.com", "api.example.com:443", false},
		{"https://[fd00::1]:6443/", "[fd00::1]:6443", false},
		{"http://10.0.0.1:6443", "", true},
		{"10.0.0.1:6443", "", true},
		{"https://", "", true},
	}
	for _, tt := range tests {
		got, err := ServerAddr(tt.url)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("ServerAddr(%q) = %q, %v; want %q, error %v", tt.url, got, err, tt.want, tt.err)
		}
	}
}

func TestNormalize(t *testing.T) {
	got := normalize([]string{"b:1", "a:1", "b:1", "", "nohost", ":1", "a:"})
	if want := []string{"a:1", "b:1"}; !slices.Equal(got, want) {
		t.Errorf("normalize = %v, want %v", got, want)
	}
}
