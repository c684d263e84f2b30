// Command summary writes the Markdown summary of a conformance run from its
// JUnit reports and upstream's list of [Conformance] tests.
//
//	summary --all conformance-tests.yaml [--focus RE] [--version V] junit_*.xml
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"

	"github.com/orca-project/orca/test/conformance/summary"
)

func main() {
	all := flag.String("all", "", "upstream's list of conformance tests (e2e.test --list-conformance-tests)")
	focus := flag.String("focus", "", "count only tests whose text matches this regular expression")
	version := flag.String("version", "", "the e2e suite's version, for the heading")
	minutes := flag.Int("minutes", 0, "how long the run took")
	flag.Parse()
	if err := run(*all, *focus, *version, *minutes, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
}

func run(all, focus, version string, minutes int, reports []string) error {
	var list []string
	if all != "" {
		f, err := os.Open(all)
		if err != nil {
			return err
		}
		defer f.Close()
		if list, err = summary.ParseList(f); err != nil {
			return err
		}
	}
	var results []summary.Result
	for _, name := range reports {
		f, err := os.Open(name)
		if err != nil {
			// A pass whose processes crashed wrote no report; its tests
			// count as not run.
			fmt.Fprintf(os.Stderr, "summary: %v\n", err)
			continue
		}
		r, err := summary.ParseJUnit(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, r...)
	}
	var re *regexp.Regexp
	if focus != "" {
		var err error
		if re, err = regexp.Compile(focus); err != nil {
			return fmt.Errorf("--focus: %w", err)
		}
	}
	summary.Markdown(os.Stdout, version, minutes, summary.Merge(list, results, re))
	return nil
}
