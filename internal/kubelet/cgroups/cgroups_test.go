package cgroups

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// res builds requirements from "cpu/memory" request and limit strings
// ("" for none).
func res(reqCPU, reqMem, limCPU, limMem string) v1.ResourceRequirements {
	r := v1.ResourceRequirements{}
	set := func(l *v1.ResourceList, n v1.ResourceName, v string) {
		if v == "" {
			return
		}
		if *l == nil {
			*l = v1.ResourceList{}
		}
		(*l)[n] = resource.MustParse(v)
	}
	set(&r.Requests, v1.ResourceCPU, reqCPU)
	set(&r.Requests, v1.ResourceMemory, reqMem)
	set(&r.Limits, v1.ResourceCPU, limCPU)
	set(&r.Limits, v1.ResourceMemory, limMem)
	return r
}

func podOf(uid string, rs ...v1.ResourceRequirements) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}}
	for i, r := range rs {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: string(rune('a' + i)), Resources: r})
	}
	return p
}

func TestPodPathAndValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		path string
		want Values
	}{
		{"best effort", podOf("u1", res("", "", "", "")), "/kubepods/besteffort/podu1",
			Values{CPUShares: 2, CPUQuota: -1, CPUPeriod: 100000, MemoryLimit: -1}},
		{"guaranteed: quota and memory limit are the containers' together", podOf("u2", res("500m", "64Mi", "500m", "64Mi"), res("250m", "32Mi", "250m", "32Mi")), "/kubepods/podu2",
			Values{CPUShares: 768, CPUQuota: 75000, CPUPeriod: 100000, MemoryLimit: 96 << 20}},
		{"burstable with every limit set", podOf("u3", res("100m", "10Mi", "1", "100Mi")), "/kubepods/burstable/podu3",
			Values{CPUShares: 102, CPUQuota: 100000, CPUPeriod: 100000, MemoryLimit: 100 << 20}},
		{"burstable: one container without limits leaves the pod unlimited", podOf("u4", res("100m", "", "1", "100Mi"), res("", "10Mi", "", "")), "/kubepods/burstable/podu4",
			Values{CPUShares: 102, CPUQuota: -1, CPUPeriod: 100000, MemoryLimit: -1}},
		{"tiny cpu limit gets the minimum quota", podOf("u5", res("1m", "", "1m", "")), "/kubepods/burstable/podu5",
			Values{CPUShares: 2, CPUQuota: 1000, CPUPeriod: 100000, MemoryLimit: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Path(tc.pod); got != tc.path {
				t.Errorf("path %s, want %s", got, tc.path)
			}
			if got := PodValues(tc.pod); got != tc.want {
				t.Errorf("values %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBurstableShares(t *testing.T) {
	pods := []*v1.Pod{
		podOf("a", res("500m", "", "", "")),
		podOf("b", res("250m", "", "", "")),
		podOf("g", res("1", "1Mi", "1", "1Mi")),
		podOf("be", res("", "", "", "")),
	}
	for _, tc := range []struct {
		pods []*v1.Pod
		want int64
	}{
		{nil, 2},
		{pods, 768},
		{pods[2:], 2},
	} {
		if got := BurstableShares(tc.pods); got != tc.want {
			t.Errorf("%d pods: burstable shares %d, want %d", len(tc.pods), got, tc.want)
		}
	}
}

func TestFiles(t *testing.T) {
	v := Values{CPUShares: 1024, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 64 << 20}
	if got, want := Files(v, false), []File{
		{"cpu", "cpu.shares", "1024"}, {"cpu", "cpu.cfs_period_us", "100000"}, {"cpu", "cpu.cfs_quota_us", "50000"},
		{"memory", "memory.limit_in_bytes", "67108864"},
	}; !reflect.DeepEqual(got, want) {
		t.Errorf("v1 files %v, want %v", got, want)
	}
	if got, want := Files(v, true), []File{{"", "cpu.weight", "39"}, {"", "cpu.max", "50000 100000"}, {"", "memory.max", "67108864"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("v2 files %v, want %v", got, want)
	}
	unlimited := Values{CPUShares: 2, CPUQuota: -1, CPUPeriod: 100000, MemoryLimit: -1}
	if got, want := Files(unlimited, true), []File{{"", "cpu.weight", "1"}, {"", "cpu.max", "max 100000"}, {"", "memory.max", "max"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("v2 unlimited files %v, want %v", got, want)
	}
}

// TestManagerWritesLayouts runs the manager over fake v1 and v2 mounts.
func TestManagerWritesLayouts(t *testing.T) {
	g := podOf("g", res("500m", "64Mi", "500m", "64Mi"))
	b := podOf("b", res("250m", "", "", ""))
	for _, v2 := range []bool{false, true} {
		mount := t.TempDir()
		if v2 {
			os.WriteFile(filepath.Join(mount, "cgroup.controllers"), []byte("cpu memory pids"), 0o644)
		} else {
			for _, c := range []string{"cpu", "memory", "devices"} {
				os.MkdirAll(filepath.Join(mount, c), 0o755)
			}
		}
		m := &Manager{Mount: mount}
		if p, err := m.EnsurePod(g, []*v1.Pod{g, b}); err != nil || p != "/kubepods/podg" {
			t.Fatalf("v2=%v: ensure guaranteed pod: %s %v", v2, p, err)
		}
		if _, err := m.EnsurePod(b, []*v1.Pod{g, b}); err != nil {
			t.Fatal(err)
		}
		read := func(ctrl, path, file string) string {
			if v2 {
				ctrl = ""
			}
			bs, _ := os.ReadFile(filepath.Join(mount, ctrl, path, file))
			return string(bs)
		}
		if v2 {
			if got := read("", "/kubepods/podg", "memory.max"); got != "67108864" {
				t.Errorf("v2 pod memory.max %q", got)
			}
			if got := read("", "/kubepods/burstable", "cpu.weight"); got != "10" {
				t.Errorf("v2 burstable cpu.weight %q", got)
			}
			if got := read("", "/kubepods", "cgroup.subtree_control"); got != "+cpu +memory +pids" {
				t.Errorf("v2 kubepods subtree_control %q", got)
			}
		} else {
			if got := read("memory", "/kubepods/podg", "memory.limit_in_bytes"); got != "67108864" {
				t.Errorf("v1 pod memory limit %q", got)
			}
			if got := read("cpu", "/kubepods/podg", "cpu.cfs_quota_us"); got != "50000" {
				t.Errorf("v1 pod quota %q", got)
			}
			if got := read("cpu", "/kubepods/burstable", "cpu.shares"); got != "256" {
				t.Errorf("v1 burstable shares %q", got)
			}
			if got := read("cpu", "/kubepods/besteffort", "cpu.shares"); got != "2" {
				t.Errorf("v1 besteffort shares %q", got)
			}
		}
		// A cgroup's files are the kernel's and go with its directory; a
		// plain directory has to be emptied first.
		filepath.Walk(mount, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() && filepath.Base(filepath.Dir(p)) == "podb" {
				os.Remove(p)
			}
			return nil
		})
		if err := m.RemovePod(b.UID, []*v1.Pod{g}); err != nil {
			t.Fatalf("remove: %v", err)
		}
		for _, ctrl := range []string{"cpu", "memory", "devices"} {
			if v2 && ctrl != "cpu" {
				continue
			}
			dir := filepath.Join(mount, ctrl, "/kubepods/burstable/podb")
			if v2 {
				dir = filepath.Join(mount, "/kubepods/burstable/podb")
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("v2=%v: %s still there after removal", v2, dir)
			}
		}
		if !v2 {
			if got := read("cpu", "/kubepods/burstable", "cpu.shares"); got != "2" {
				t.Errorf("burstable shares after its only pod went: %q", got)
			}
		}
	}
}

func TestWidest(t *testing.T) {
	small := Values{CPUShares: 102, CPUQuota: 10000, CPUPeriod: 100000, MemoryLimit: 64 << 20}
	big := Values{CPUShares: 512, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 128 << 20}
	unlimited := Values{CPUShares: 2, CPUQuota: -1, CPUPeriod: 100000, MemoryLimit: -1}
	for _, tc := range []struct {
		a, b, want Values
	}{
		{small, big, big},
		{big, small, big},
		{small, unlimited, Values{CPUShares: 102, CPUQuota: -1, CPUPeriod: 100000, MemoryLimit: -1}},
		{Values{CPUShares: 600, CPUQuota: 10000, CPUPeriod: 100000, MemoryLimit: 256 << 20}, big, Values{CPUShares: 600, CPUQuota: 50000, CPUPeriod: 100000, MemoryLimit: 256 << 20}},
	} {
		if got := Widest(tc.a, tc.b); got != tc.want {
			t.Errorf("Widest(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
		}
	}
}
