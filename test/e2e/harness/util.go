package harness

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ModuleRoot is the directory of the e2e Go module (test/e2e): $TOPOFIT_E2E_DIR when set, else the
// nearest directory above the working directory (go test runs in the package's directory) whose
// go.mod declares topofit.dev/e2e, else the source directory the harness was compiled from (not
// usable under -trimpath, which run.sh uses).
func ModuleRoot() string {
	if d := os.Getenv("TOPOFIT_E2E_DIR"); d != "" {
		return d
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
				bytes.Contains(b, []byte("module topofit.dev/e2e\n")) {
				return d
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	_, file, _, ok := runtime.Caller(0)
	if ok && filepath.IsAbs(file) {
		return filepath.Dir(filepath.Dir(file))
	}
	wd, _ := os.Getwd()
	return wd
}

// TailFile returns the last n lines of a file, for failure reports.
func TailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// GrepFile returns the lines of a file that contain s.
func GrepFile(path, s string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.Contains(l, []byte(s)) {
			out = append(out, string(l))
		}
	}
	return out
}

var buildOnce struct {
	sync.Once
	dir string
	err error
}

// UpstreamBinDir is where kube-apiserver and kube-scheduler are: $TOPOFIT_E2E_BIN_DIR when set
// (run.sh sets it), else whatever build.sh builds or finds in its cache.
func UpstreamBinDir() (string, error) {
	if d := os.Getenv("TOPOFIT_E2E_BIN_DIR"); d != "" {
		return d, nil
	}
	buildOnce.Do(func() {
		var out bytes.Buffer
		cmd := execCommand(filepath.Join(ModuleRoot(), "build.sh"))
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			buildOnce.err = fmt.Errorf("build.sh: %w", err)
			return
		}
		buildOnce.dir = strings.TrimSpace(out.String())
	})
	return buildOnce.dir, buildOnce.err
}

// procCPUSeconds reads the user and system CPU time of process pid from /proc/<pid>/stat (fields 14
// and 15, in clock ticks of 1/100 s, USER_HZ on Linux); 0 when it cannot be read.
func procCPUSeconds(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it start past the last ')'.
	rest := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(rest) < 13 {
		return 0
	}
	var utime, stime float64
	fmt.Sscan(rest[11], &utime)
	fmt.Sscan(rest[12], &stime)
	return (utime + stime) / 100
}
