package core

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// serviceAccount is the deprecated alias of serviceAccountName: read only
// when the name is empty, and always written back as the name, in pods and
// in templates alike.
func TestDefaultServiceAccountAlias(t *testing.T) {
	cases := []struct {
		name, saName, sa string
		wantName         string
	}{
		{"name only", "builder", "", "builder"},
		{"alias only", "", "legacy", "legacy"},
		{"both: the name wins", "builder", "legacy", "builder"},
		{"neither", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := corev1.PodSpec{ServiceAccountName: c.saName, DeprecatedServiceAccount: c.sa}
			DefaultPodSpec(&spec)
			if spec.ServiceAccountName != c.wantName || spec.DeprecatedServiceAccount != c.wantName {
				t.Errorf("serviceAccountName %q serviceAccount %q, want both %q", spec.ServiceAccountName, spec.DeprecatedServiceAccount, c.wantName)
			}
		})
	}
}

// The status's podIP and hostIP are the first entries of their lists; a
// singular field set alone, or disagreeing with the list, wins, as
// upstream's conversion has it for older kubelets.
func TestDefaultPodStatusIPs(t *testing.T) {
	ips := func(s ...string) []corev1.PodIP {
		var out []corev1.PodIP
		for _, ip := range s {
			out = append(out, corev1.PodIP{IP: ip})
		}
		return out
	}
	cases := []struct {
		name      string
		ip        string
		list      []corev1.PodIP
		wantIP    string
		wantList  []corev1.PodIP
		hostIP    string
		hostList  []corev1.HostIP
		wantHost  string
		wantHosts []corev1.HostIP
	}{
		{name: "none"},
		{name: "singular only", ip: "10.0.0.1", wantIP: "10.0.0.1", wantList: ips("10.0.0.1"),
			hostIP: "192.168.0.1", wantHost: "192.168.0.1", wantHosts: []corev1.HostIP{{IP: "192.168.0.1"}}},
		{name: "list only", list: ips("10.0.0.1", "fd00::1"), wantIP: "10.0.0.1", wantList: ips("10.0.0.1", "fd00::1"),
			hostList: []corev1.HostIP{{IP: "192.168.0.1"}}, wantHost: "192.168.0.1", wantHosts: []corev1.HostIP{{IP: "192.168.0.1"}}},
		{name: "agreeing", ip: "10.0.0.1", list: ips("10.0.0.1", "fd00::1"), wantIP: "10.0.0.1", wantList: ips("10.0.0.1", "fd00::1")},
		{name: "disagreeing: the singular field wins", ip: "10.0.0.2", list: ips("10.0.0.1", "fd00::1"), wantIP: "10.0.0.2", wantList: ips("10.0.0.2"),
			hostIP: "192.168.0.2", hostList: []corev1.HostIP{{IP: "192.168.0.1"}}, wantHost: "192.168.0.2", wantHosts: []corev1.HostIP{{IP: "192.168.0.2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pod := &corev1.Pod{Status: corev1.PodStatus{PodIP: c.ip, PodIPs: c.list, HostIP: c.hostIP, HostIPs: c.hostList}}
			defaultPod(pod)
			st := pod.Status
			if st.PodIP != c.wantIP || !reflect.DeepEqual(st.PodIPs, c.wantList) {
				t.Errorf("podIP %q podIPs %v, want %q %v", st.PodIP, st.PodIPs, c.wantIP, c.wantList)
			}
			if st.HostIP != c.wantHost || !reflect.DeepEqual(st.HostIPs, c.wantHosts) {
				t.Errorf("hostIP %q hostIPs %v, want %q %v", st.HostIP, st.HostIPs, c.wantHost, c.wantHosts)
			}
		})
	}
}
