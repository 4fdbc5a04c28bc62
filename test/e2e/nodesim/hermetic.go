package nodesim

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"topofit.dev/e2e/skip"
)

const nsEnv = "TOPOFIT_NODESIM_IN_NAMESPACE"

// Hermetic runs the calling top-level test in a private mount namespace with a tmpfs on
// /var/lib/kubelet, so that the device manager's fixed socket paths touch nothing of the machine.
// Outside the namespace it re-runs the test binary for this one test under
// `unshare --mount --propagation private`, reports its result and returns false (the caller
// returns); inside it mounts the tmpfs and returns true. It skips the test when not root or when
// unshare is missing.
//
// The tmpfs goes on /var/lib/kubelet when that directory exists, else on /var/lib (with kubelet/
// made in it): no directory is created on the machine either way.
func Hermetic(t *testing.T) bool {
	t.Helper()
	if os.Getenv(nsEnv) == "1" {
		target := "/var/lib/kubelet"
		if _, err := os.Stat(target); err != nil {
			target = "/var/lib"
		}
		if err := syscall.Mount("tmpfs", target, "tmpfs", 0, "mode=0755"); err != nil {
			t.Fatalf("tmpfs on %s: %v", target, err)
		}
		if err := os.MkdirAll("/var/lib/kubelet", 0o755); err != nil {
			t.Fatal(err)
		}
		return true
	}
	if os.Geteuid() != 0 {
		skip.OrFail(t, "needs root: runs kubelet's device manager on its fixed /var/lib/kubelet paths inside `unshare --mount` with a tmpfs there")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		skip.OrFail(t, "needs unshare (util-linux) for a private mount namespace")
	}
	args := []string{"--mount", "--propagation", "private", os.Args[0],
		"-test.run", "^" + regexp.QuoteMeta(t.Name()) + "$", "-test.v", "-test.count=1"}
	if testing.Short() {
		args = append(args, "-test.short")
	}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), nsEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(os.Stdout, &out)
	cmd.Stderr = io.MultiWriter(os.Stderr, &out)
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s in its mount namespace: %v", t.Name(), err)
	}
	if bytes.Contains(out.Bytes(), []byte("--- SKIP: "+t.Name())) {
		t.Skip("skipped in its mount namespace (reason above)")
	}
	return false
}
