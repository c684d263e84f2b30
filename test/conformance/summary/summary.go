// Package summary turns the reports of a conformance run (ginkgo's JUnit
// XML and upstream's list of [Conformance] tests) into the counts the
// project publishes: how many tests exist, how many passed, per SIG, and
// every failure with its message. A test the list names that no report
// mentions counts as failed ("not run"): a crashed ginkgo process loses its
// report, and no test may be missing from the count unnoticed.
package summary

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v2"
)

// Result is the outcome of one test.
type Result struct {
	Name    string // the spec's full text, spaces collapsed
	SIG     string // "network", from "[sig-network]"; "" if none
	Passed  bool
	Skipped bool
	Message string // first line of the failure, for failed tests
}

// junitSuites is the part of ginkgo's JUnit report read here.
type junitSuites struct {
	Suites []struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Status  string `xml:"status,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Body    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct{} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

var (
	spaces = regexp.MustCompile(`\s+`)
	sigRE  = regexp.MustCompile(`\[sig-([a-z0-9-]+)\]`)
	tagRE  = regexp.MustCompile(`\[[^\]]*\]`)
)

// key identifies a spec whatever the order of its tags: upstream's list
// writes "[Conformance] [Serial]" at the end where the suite may put
// "[Serial]" in the middle of the text.
func key(name string) string {
	k := tagRE.ReplaceAllStringFunc(name, func(tag string) string {
		if sigRE.MatchString(tag) {
			return tag
		}
		return " "
	})
	return strings.TrimSpace(spaces.ReplaceAllString(k, " "))
}

// Normalize makes a spec's text comparable across the JUnit report and
// upstream's list: the node type ginkgo puts first ("[It] ") goes, and
// runs of spaces become one.
func Normalize(name string) string {
	name = strings.TrimSpace(spaces.ReplaceAllString(name, " "))
	return strings.TrimPrefix(name, "[It] ")
}

// SIG returns the SIG a spec's text names, without "sig-".
func SIG(name string) string {
	if m := sigRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return ""
}

// ParseJUnit reads the test cases of one JUnit report. Suite-level nodes
// (BeforeSuite, AfterSuite, reporters) are left out: they are not tests.
func ParseJUnit(r io.Reader) ([]Result, error) {
	var s junitSuites
	if err := xml.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("reading JUnit report: %w", err)
	}
	var out []Result
	for _, suite := range s.Suites {
		for _, c := range suite.Cases {
			name := Normalize(c.Name)
			if strings.HasPrefix(name, "[SynchronizedBeforeSuite]") || strings.HasPrefix(name, "[SynchronizedAfterSuite]") ||
				strings.HasPrefix(name, "[BeforeSuite]") || strings.HasPrefix(name, "[AfterSuite]") ||
				strings.HasPrefix(name, "[ReportAfterSuite]") || strings.HasPrefix(name, "[ReportBeforeSuite]") {
				continue
			}
			res := Result{Name: name, SIG: SIG(name)}
			switch {
			case c.Failure != nil:
				res.Message = firstLine(c.Failure.Message, c.Failure.Body)
			case c.Error != nil:
				res.Message = firstLine(c.Error.Message, c.Error.Body)
			case c.Skipped != nil || c.Status == "skipped" || c.Status == "pending":
				res.Skipped = true
			default:
				res.Passed = true
			}
			out = append(out, res)
		}
	}
	return out, nil
}

func firstLine(texts ...string) string {
	for _, t := range texts {
		for _, l := range strings.Split(t, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				if len(l) > 300 {
					l = l[:300] + "..."
				}
				return l
			}
		}
	}
	return "failed"
}

// ParseList reads upstream's list of conformance tests (the output of
// e2e.test --list-conformance-tests) and returns their spec texts.
func ParseList(r io.Reader) ([]string, error) {
	var tests []struct {
		Codename string `yaml:"codename"`
	}
	if err := yaml.NewDecoder(r).Decode(&tests); err != nil {
		return nil, fmt.Errorf("reading the conformance test list: %w", err)
	}
	names := make([]string, 0, len(tests))
	for _, t := range tests {
		names = append(names, Normalize(t.Codename))
	}
	return names, nil
}

// Merge lays the reported results over the full list: each listed test gets
// its result, a listed test no report has fails as "not run", and a result
// for a test the list lacks is kept (the list may lag the suite). A test
// reported twice (run again in the serial pass) keeps its failure: a pass
// never hides one. When focus is set, only listed tests it matches count.
func Merge(list []string, results []Result, focus *regexp.Regexp) []Result {
	byKey := map[string]Result{}
	for _, r := range results {
		if r.Skipped {
			continue
		}
		if old, ok := byKey[key(r.Name)]; ok && !old.Passed {
			continue
		}
		byKey[key(r.Name)] = r
	}
	var out []Result
	seen := map[string]bool{}
	for _, name := range list {
		if focus != nil && !focus.MatchString(name) {
			continue
		}
		seen[key(name)] = true
		if r, ok := byKey[key(name)]; ok {
			r.Name = name
			out = append(out, r)
			continue
		}
		out = append(out, Result{Name: name, SIG: SIG(name), Message: "not run: no report has this test"})
	}
	for k, r := range byKey {
		if !seen[k] && strings.Contains(r.Name, "[Conformance]") && (focus == nil || focus.MatchString(r.Name)) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Count is the tally of one SIG, or of everything.
type Count struct {
	SIG           string
	Total, Passed int
}

// Tally counts results per SIG, in name order, and in all.
func Tally(results []Result) (all Count, bySIG []Count) {
	m := map[string]*Count{}
	for _, r := range results {
		c := m[r.SIG]
		if c == nil {
			c = &Count{SIG: r.SIG}
			m[r.SIG] = c
		}
		c.Total++
		all.Total++
		if r.Passed {
			c.Passed++
			all.Passed++
		}
	}
	for _, c := range m {
		bySIG = append(bySIG, *c)
	}
	sort.Slice(bySIG, func(i, j int) bool { return bySIG[i].SIG < bySIG[j].SIG })
	return all, bySIG
}

// Markdown writes the summary: the totals, a table per SIG and the
// failures with their first message line.
func Markdown(w io.Writer, version string, minutes int, results []Result) {
	all, bySIG := Tally(results)
	fmt.Fprintf(w, "## Conformance run\n\n")
	if version != "" {
		fmt.Fprintf(w, "e2e suite: %s", version)
		if minutes > 0 {
			fmt.Fprintf(w, " · %d minutes", minutes)
		}
		fmt.Fprintf(w, "\n\n")
	}
	fmt.Fprintf(w, "**%d of %d [Conformance] tests passed** (%d failed)\n\n", all.Passed, all.Total, all.Total-all.Passed)
	fmt.Fprintf(w, "| SIG | passed | total |\n|---|---:|---:|\n")
	for _, c := range bySIG {
		sig := c.SIG
		if sig == "" {
			sig = "(none)"
		}
		fmt.Fprintf(w, "| %s | %d | %d |\n", sig, c.Passed, c.Total)
	}
	failed := 0
	for _, r := range results {
		if !r.Passed {
			if failed == 0 {
				fmt.Fprintf(w, "\n### Failed\n\n")
			}
			failed++
			fmt.Fprintf(w, "- %s  \n  %s\n", r.Name, strings.ReplaceAll(r.Message, "|", "\\|"))
		}
	}
}
