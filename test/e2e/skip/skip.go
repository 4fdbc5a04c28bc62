// Package skip: the one way an e2e test steps aside when something it needs is missing.
//
// OrFail skips the test with the reason - except under CI (CI=true, as .ci/run runs the suite), where a
// test that cannot run is a failure: a missing binary, flag or privilege must turn CI red, not leave it
// green with the test unseen. The README ("Tests that may skip") lists the reasons and when they apply.
package skip

import (
	"os"
	"testing"
)

// OrFail ends the test: Skip with `reason`, or Fatal with it when CI=true.
func OrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("cannot run, and CI must run it: %s", reason)
	}
	t.Skip(reason)
}
