package embedded

import "testing"

func TestPlanJoin(t *testing.T) {
	members := []Member{
		{ID: 1, Name: "a", PeerURLs: []string{"https://10.0.0.1:2380"}},
		{ID: 2, Name: "", PeerURLs: []string{"https://10.0.0.2:2380"}, Learner: true},
	}
	for _, tc := range []struct {
		name, peer string
		want       joinPlan
	}{
		{"a new address is added", "https://10.0.0.3:2380", joinPlan{}},
		{"an unstarted member at the address is started as is", "https://10.0.0.2:2380", joinPlan{reuse: 2}},
		{"a started member at the address lost its data and goes first", "https://10.0.0.1:2380", joinPlan{remove: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := planJoin(members, tc.peer); got != tc.want {
				t.Errorf("planJoin(%s) = %+v, want %+v", tc.peer, got, tc.want)
			}
		})
	}
}

func TestInitialCluster(t *testing.T) {
	members := []Member{
		{ID: 1, Name: "a", PeerURLs: []string{"https://10.0.0.1:2380"}},
		{ID: 7, PeerURLs: []string{"https://10.0.0.3:2380"}},
		{ID: 2, Name: "b", PeerURLs: []string{"https://10.0.0.2:2380"}},
	}
	want := "a=https://10.0.0.1:2380,c=https://10.0.0.3:2380,b=https://10.0.0.2:2380"
	if got := initialCluster(members, 7, "c"); got != want {
		t.Errorf("initialCluster = %q, want %q", got, want)
	}
}
