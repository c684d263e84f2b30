package apiserver

import (
	"slices"
	"testing"
)

func TestEndpointIPs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, nil},
		{[]string{"10.0.0.3", "10.0.0.1", "10.0.0.3"}, []string{"10.0.0.1", "10.0.0.3"}},
		{[]string{"10.0.0.1", "not-an-ip", ""}, []string{"10.0.0.1"}},
	} {
		if got := endpointIPs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("endpointIPs(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
