package main

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestNodeFlags(t *testing.T) {
	good := agentFlags{labels: []string{"gpu=true", "zone=a"}, taints: []string{"dedicated=db:NoSchedule", "spot:PreferNoSchedule"}, reserved: []string{"cpu=100m", "memory=256Mi"}}
	o, err := good.complete()
	if err != nil {
		t.Fatal(err)
	}
	if o.Labels["gpu"] != "true" || o.Labels["zone"] != "a" {
		t.Errorf("labels %v", o.Labels)
	}
	if len(o.Taints) != 2 || o.Taints[0] != (v1.Taint{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoSchedule}) ||
		o.Taints[1] != (v1.Taint{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}) {
		t.Errorf("taints %+v", o.Taints)
	}
	if q := o.Reserved[v1.ResourceMemory]; q.String() != "256Mi" {
		t.Errorf("reserved memory %s", q.String())
	}
	for _, bad := range []agentFlags{
		{labels: []string{"=x"}},
		{taints: []string{"key=value"}},
		{taints: []string{"key=value:Sometimes"}},
		{reserved: []string{"cpu"}},
		{reserved: []string{"cpu=lots"}},
	} {
		if _, err := bad.complete(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
