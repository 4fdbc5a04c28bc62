package tests

// Where the throughput run's CPU goes (docs/throughput.md, "Where the cost is"):
// TOPOFIT_E2E_THROUGHPUT_PROFILE=SECONDS takes CPU profiles of kube-apiserver and kube-scheduler
// (their pprof endpoints) over the first SECONDS of each run's burst, and after the run the
// apiserver's request and watch-event counters, into the run's artifacts directory:
// kube-apiserver.pprof, kube-scheduler.pprof, kube-apiserver.metrics.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
)

// profileSeconds is TOPOFIT_E2E_THROUGHPUT_PROFILE, 0 when unset.
func profileSeconds() int {
	n, _ := strconv.Atoi(os.Getenv("TOPOFIT_E2E_THROUGHPUT_PROFILE"))
	return n
}

// enableProfiling turns on the pprof endpoints the profiles are read from.
func enableProfiling(opts *harness.Options) {
	opts.APIServerArgs = append(opts.APIServerArgs, "--profiling=true")
	opts.SchedulerArgs = append(opts.SchedulerArgs, "--profiling=true",
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics,/debug/pprof/*")
}

// startProfiles fetches both CPU profiles in the background; the returned func waits for them.
func startProfiles(t *testing.T, c *harness.Cluster, seconds int) func() {
	var wg sync.WaitGroup
	q := fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds)
	for _, target := range []struct{ name, url, token string }{
		{"kube-apiserver.pprof", c.APIServer.URL + q, c.APIServer.Identities["admin"].Token},
		{"kube-scheduler.pprof", c.Scheduler.URL() + q, ""},
	} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fetchTo(c, target.url, target.token, filepath.Join(c.Dir, target.name)); err != nil {
				t.Errorf("profile %s: %v", target.name, err)
			}
		}()
	}
	return wg.Wait
}

// saveAPIServerMetrics keeps the apiserver's request and watch counters of the run.
func saveAPIServerMetrics(t *testing.T, c *harness.Cluster) {
	path := filepath.Join(c.Dir, "kube-apiserver.metrics")
	if err := fetchTo(c, c.APIServer.URL+"/metrics", c.APIServer.Identities["admin"].Token, path); err != nil {
		t.Errorf("apiserver metrics: %v", err)
		return
	}
	raw, _ := os.ReadFile(path)
	var keep []string
	for _, line := range strings.Split(string(raw), "\n") {
		for _, m := range []string{"apiserver_request_total{", "apiserver_watch_events_total{", "apiserver_watch_events_sizes_sum{"} {
			if strings.HasPrefix(line, m) {
				keep = append(keep, line)
			}
		}
	}
	_ = os.WriteFile(path+".summary", []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

func fetchTo(c *harness.Cluster, url, token, path string) error {
	client := c.PKI.HTTPClient(5*time.Minute, token != "")
	defer client.CloseIdleConnections()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %.200s", url, res.Status, body)
	}
	return os.WriteFile(path, body, 0o644)
}
