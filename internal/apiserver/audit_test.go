package apiserver

import (
	"net/http/httptest"
	"testing"
)

// The requests kube-apiserver treats as long-running: they take no
// in-flight slot and have a ResponseStarted audit stage.
func TestLongRunning(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/api/v1/namespaces/default/pods?watch=true", true},
		{"GET", "/api/v1/pods?watch=1", true},
		{"GET", "/api/v1/namespaces/default/pods/p/log", true},
		{"GET", "/api/v1/namespaces/default/pods/p/log?follow=true", true},
		{"POST", "/api/v1/namespaces/default/pods/p/exec?command=ls", true},
		{"GET", "/api/v1/namespaces/default/pods/p/attach", true},
		{"POST", "/api/v1/namespaces/default/pods/p/portforward", true},
		{"GET", "/debug/pprof/profile", true},
		{"GET", "/api/v1/namespaces/default/pods", false},
		{"GET", "/api/v1/namespaces/default/pods/p", false},
		{"POST", "/api/v1/namespaces/default/pods", false},
		{"PUT", "/api/v1/namespaces/default/pods/p/status", false},
		{"GET", "/debug/pprof", false},
		{"GET", "/healthz", false},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		st := &requestState{}
		st.info, st.resource = parseRequestInfo(r)
		if got := longRunning(r, st); got != tc.want {
			t.Errorf("%s %s: long-running %v, want %v", tc.method, tc.path, got, tc.want)
		}
	}
}
