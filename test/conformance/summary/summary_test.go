package summary

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

const report = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1">
  <testsuite name="Kubernetes e2e suite" tests="5">
    <testcase name="[SynchronizedBeforeSuite]" status="passed"></testcase>
    <testcase name="[It] [sig-apps] Deployment  should run the lifecycle of a Deployment [Conformance]" status="passed"></testcase>
    <testcase name="[It] [sig-network] DNS should provide DNS for services  [Conformance]" status="failed">
      <failure message="timed out waiting for the condition&#xA;more detail" type="failed">[FAILED] timed out</failure>
    </testcase>
    <testcase name="[It] [sig-node] Pods should be updated [NodeConformance] [Conformance]" status="skipped"><skipped message="skipped"></skipped></testcase>
    <testcase name="[It] [sig-node] Extra [Conformance]" status="passed"></testcase>
    <testcase name="[It] [sig-scheduling] SchedulerPredicates [Serial] validates resource limits [Conformance]" status="passed"></testcase>
  </testsuite>
</testsuites>`

const list = `- testname: Deployment lifecycle
  codename: '[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]'
- testname: DNS services
  codename: '[sig-network] DNS should provide DNS for services [Conformance]'
- testname: Pod update
  codename: '[sig-node] Pods should be updated [NodeConformance] [Conformance]'
- testname: Scheduler, resource limits
  codename: '[sig-scheduling] SchedulerPredicates validates resource limits
    [Conformance] [Serial]'
- testname: Secrets
  codename: '[sig-node] Secrets should be consumable via the environment [NodeConformance] [Conformance]'
`

func TestMergeCountsEveryListedTest(t *testing.T) {
	results, err := ParseJUnit(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	names, err := ParseList(strings.NewReader(list))
	if err != nil {
		t.Fatal(err)
	}
	merged := Merge(names, results, nil)
	got := map[string]Result{}
	for _, r := range merged {
		got[r.Name] = r
	}
	for name, want := range map[string]struct {
		passed bool
		msg    string
	}{
		"[sig-apps] Deployment should run the lifecycle of a Deployment [Conformance]":                {true, ""},
		"[sig-network] DNS should provide DNS for services [Conformance]":                             {false, "timed out waiting for the condition"},
		"[sig-node] Pods should be updated [NodeConformance] [Conformance]":                           {false, "not run: no report has this test"},
		"[sig-node] Secrets should be consumable via the environment [NodeConformance] [Conformance]": {false, "not run: no report has this test"},
		"[sig-node] Extra [Conformance]":                                                              {true, ""},
	} {
		r, ok := got[name]
		if !ok {
			t.Errorf("%q missing from the merged results", name)
			continue
		}
		if r.Passed != want.passed || r.Message != want.msg {
			t.Errorf("%q: passed=%v message=%q, want %v %q", name, r.Passed, r.Message, want.passed, want.msg)
		}
	}
	if len(merged) != 6 {
		t.Errorf("merged %d results, want 6 (5 listed, 1 reported beyond the list)", len(merged))
	}
	all, bySIG := Tally(merged)
	if all.Total != 6 || all.Passed != 3 {
		t.Errorf("tally = %+v, want 3 of 6", all)
	}
	if len(bySIG) != 4 || bySIG[2].SIG != "node" || bySIG[2].Total != 3 || bySIG[2].Passed != 1 {
		t.Errorf("per SIG = %+v", bySIG)
	}
}

func TestFailureIsNotHiddenByARerunPass(t *testing.T) {
	name := "[sig-x] a [Conformance]"
	merged := Merge([]string{name}, []Result{{Name: name, Message: "boom"}, {Name: name, Passed: true}}, nil)
	if len(merged) != 1 || merged[0].Passed {
		t.Errorf("merged = %+v, want the failure kept", merged)
	}
}

func TestFocusLimitsTheCount(t *testing.T) {
	names, _ := ParseList(strings.NewReader(list))
	merged := Merge(names, nil, regexp.MustCompile(`sig-apps`))
	if len(merged) != 1 || merged[0].SIG != "apps" {
		t.Errorf("merged = %+v, want only the apps test", merged)
	}
}

func TestMarkdown(t *testing.T) {
	var b bytes.Buffer
	Markdown(&b, "v1.37.2", 42, []Result{
		{Name: "[sig-a] x [Conformance]", SIG: "a", Passed: true},
		{Name: "[sig-b] y [Conformance]", SIG: "b", Message: "bad | worse"},
	})
	out := b.String()
	for _, want := range []string{"e2e suite: v1.37.2 · 42 minutes", "**1 of 2 [Conformance] tests passed** (1 failed)",
		"| a | 1 | 1 |", "| b | 0 | 1 |", "- [sig-b] y [Conformance]  \n  bad \\| worse"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
}
