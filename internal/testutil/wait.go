// Package testutil holds helpers shared by the unit tests of several
// packages, so that each is written once.
package testutil

import (
	"testing"
	"time"
)

// Eventually polls cond every 20 ms until it holds, failing the test
// with what when it still does not after timeout.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not the case after %v: %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
