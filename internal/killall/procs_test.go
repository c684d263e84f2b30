package killall

import (
	"slices"
	"testing"
)

func TestVictims(t *testing.T) {
	const dir = "/var/lib/orca"
	// A machine: init, a shell that ran killall, the server of dir with
	// containerd and a shim, a pod under the shim, and unrelated work.
	machine := []Proc{
		{PID: 1, PPID: 0, Args: []string{"/sbin/init"}},
		{PID: 2, PPID: 0}, // kthreadd
		{PID: 10, PPID: 1, Args: []string{"/usr/local/bin/orca", "server", "--data-dir", dir}},
		{PID: 11, PPID: 1, Args: []string{"containerd", "--config", dir + "/agent/containerd/config.toml"}},
		{PID: 12, PPID: 1, Args: []string{"/usr/bin/containerd-shim-runc-v2", "-namespace", "k8s.io", "-id", "abc", "-address", dir + "/agent/containerd/containerd.sock"}},
		{PID: 13, PPID: 12, Args: []string{"/pause"}},
		{PID: 14, PPID: 12, Args: []string{"sh", "-c", "sleep 3600"}},
		{PID: 15, PPID: 14, Args: []string{"sleep", "3600"}},
		{PID: 20, PPID: 1, Args: []string{"sshd"}},
		{PID: 21, PPID: 20, Args: []string{"bash"}},
		{PID: 22, PPID: 21, Args: []string{"orca", "killall", "--data-dir", dir}},
		{PID: 30, PPID: 1, Args: []string{"/usr/local/bin/orca", "server", "--data-dir", "/var/lib/orca-other"}},
		{PID: 31, PPID: 1, Args: []string{"containerd", "--config", "/var/lib/orca-other/agent/containerd/config.toml"}},
	}
	for _, tc := range []struct {
		name       string
		procs      []Proc
		dir, deflt string
		self       int
		want       []int
	}{
		{
			name:  "server, containerd, shim and the pod's processes; not the caller nor another directory's",
			procs: machine, dir: dir, self: 22,
			want: []int{10, 11, 12, 13, 14, 15},
		},
		{
			name:  "the other directory",
			procs: machine, dir: "/var/lib/orca-other", self: 22,
			want: []int{30, 31},
		},
		{
			name:  "--data-dir=DIR",
			procs: []Proc{{PID: 5, PPID: 1, Args: []string{"orca", "agent", "--data-dir=" + dir}}},
			dir:   dir, self: 99,
			want: []int{5},
		},
		{
			name: "a server without --data-dir is the default directory's",
			procs: []Proc{
				{PID: 5, PPID: 1, Args: []string{"/usr/local/bin/orca", "server", "--node-ip", "10.0.0.1"}},
				{PID: 6, PPID: 1, Args: []string{"/usr/local/bin/orca", "agent", "--server", "https://x:6443"}},
				{PID: 7, PPID: 1, Args: []string{"/usr/local/bin/orca", "kubectl", "get", "pods"}},
				{PID: 8, PPID: 1, Args: []string{"/usr/local/bin/orca", "server", "--data-dir", "/srv/orca"}},
			},
			dir: dir, deflt: dir, self: 99,
			want: []int{5, 6},
		},
		{
			name:  "and only that directory's",
			procs: []Proc{{PID: 5, PPID: 1, Args: []string{"/usr/local/bin/orca", "server"}}},
			dir:   "/srv/orca", deflt: dir, self: 99,
			want: []int{},
		},
		{
			name:  "a prefix of another directory's name is not inside it",
			procs: []Proc{{PID: 5, PPID: 1, Args: []string{"containerd", "--config", dir + "2/agent/containerd/config.toml"}}},
			dir:   dir, self: 99,
			want: []int{},
		},
		{
			name: "an ancestor naming the directory is spared, and so are its other children",
			procs: []Proc{
				{PID: 5, PPID: 1, Args: []string{"nsenter", "--net=/run/netns/x", "orca", "killall", "--data-dir", dir}},
				{PID: 6, PPID: 5, Args: []string{"orca", "killall", "--data-dir", dir}},
				{PID: 7, PPID: 6, Args: []string{"ip", "link"}},
			},
			dir: dir, self: 6,
			want: []int{},
		},
		{
			name: "descendants of any depth, whatever their command lines",
			procs: []Proc{
				{PID: 3, PPID: 1, Args: []string{"containerd-shim", "-address", dir + "/agent/containerd/containerd.sock"}},
				{PID: 40, PPID: 3, Args: []string{"a"}},
				{PID: 41, PPID: 40, Args: []string{"b"}},
				{PID: 42, PPID: 41},
				{PID: 50, PPID: 1, Args: []string{"c"}},
			},
			dir: dir, self: 99,
			want: []int{3, 40, 41, 42},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Victims(tc.procs, tc.dir, tc.deflt, tc.self)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Victims = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		stat  string
		ppid  int
		state byte
		ok    bool
	}{
		{"1234 (containerd) S 1 1234 1234 0 -1", 1, 'S', true},
		{"77 (a (weird) ) name) Z 12 77 77", 12, 'Z', true},
		{"garbage", 0, 0, false},
	} {
		ppid, state, ok := parseStat(tc.stat)
		if ppid != tc.ppid || state != tc.state || ok != tc.ok {
			t.Errorf("parseStat(%q) = %d %q %v, want %d %q %v", tc.stat, ppid, state, ok, tc.ppid, tc.state, tc.ok)
		}
	}
}

func TestSplitCmdline(t *testing.T) {
	if got := splitCmdline([]byte("sh\x00-c\x00echo a b\x00")); !slices.Equal(got, []string{"sh", "-c", "echo a b"}) {
		t.Errorf("got %q", got)
	}
	if got := splitCmdline(nil); got != nil {
		t.Errorf("kernel thread: got %q", got)
	}
}
