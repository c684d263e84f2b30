package server

import (
	"errors"
	"testing"
)

func TestAdvertisedIP(t *testing.T) {
	detected := func() (string, error) { return "192.168.1.20", nil }
	noNetwork := func() (string, error) { return "", errors.New("network is unreachable") }
	for _, tc := range []struct {
		name                    string
		advertise, bind, nodeIP string
		detect                  func() (string, error)
		want                    string
	}{
		{"flag wins", "10.0.0.5", "0.0.0.0", "192.168.1.30", detected, "10.0.0.5"},
		{"loopback flag passed over for the node IP", "127.0.0.1", "0.0.0.0", "192.168.1.30", detected, "192.168.1.30"},
		{"unspecified flag passed over", "0.0.0.0", "", "", detected, "192.168.1.20"},
		{"unresolved name passed over", "no-such-host.invalid", "0.0.0.0", "", detected, "192.168.1.20"},
		{"specific bind address", "", "10.1.2.3", "192.168.1.30", detected, "10.1.2.3"},
		{"loopback bind: only loopback reaches it", "", "127.0.0.1", "192.168.1.30", detected, "127.0.0.1"},
		{"in-process agent's node IP", "", "0.0.0.0", "192.168.1.30", detected, "192.168.1.30"},
		{"default route's source", "", "0.0.0.0", "", detected, "192.168.1.20"},
		{"no network at all", "", "0.0.0.0", "", noNetwork, "127.0.0.1"},
	} {
		if got := advertisedIP(tc.advertise, tc.bind, tc.nodeIP, tc.detect); got != tc.want {
			t.Errorf("%s: advertisedIP(%q, %q, %q) = %s, want %s", tc.name, tc.advertise, tc.bind, tc.nodeIP, got, tc.want)
		}
	}
}

func TestKubeconfigHost(t *testing.T) {
	for bind, want := range map[string]string{"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "127.0.0.1", "127.0.0.1": "127.0.0.1", "10.1.2.3": "10.1.2.3"} {
		if got := kubeconfigHost(bind); got != want {
			t.Errorf("kubeconfigHost(%q) = %s, want %s", bind, got, want)
		}
	}
}
