package harness

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Scheduler is upstream kube-scheduler run as a subprocess with a KubeSchedulerConfiguration.
type Scheduler struct {
	Process
	ConfigPath string // the rendered configuration the scheduler runs with
	healthURL  string
}

// RenderSchedulerConfig reads a KubeSchedulerConfiguration (e.g. testdata/scheduler-config.yaml or
// the project's manifest) and adapts it to the test cluster: clientConnection.kubeconfig, leader
// election off, and, when extenderAddr is not empty, every extender's urlPrefix re-pointed at
// http://extenderAddr (its path kept). Everything else is left as written.
func RenderSchedulerConfig(src, dst, kubeconfig, extenderAddr string) error {
	raw, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	cc, _ := cfg["clientConnection"].(map[string]any)
	if cc == nil {
		cc = map[string]any{}
	}
	cc["kubeconfig"] = kubeconfig
	cfg["clientConnection"] = cc
	le, _ := cfg["leaderElection"].(map[string]any)
	if le == nil {
		le = map[string]any{}
	}
	le["leaderElect"] = false
	cfg["leaderElection"] = le
	if extenderAddr != "" {
		exts, _ := cfg["extenders"].([]any)
		for _, e := range exts {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			prefix, _ := m["urlPrefix"].(string)
			u, err := url.Parse(prefix)
			if err != nil {
				return fmt.Errorf("%s: urlPrefix %q: %w", src, prefix, err)
			}
			u.Scheme, u.Host = "http", extenderAddr
			if b, _ := m["enableHTTPS"].(bool); b {
				u.Scheme = "https"
			}
			m["urlPrefix"] = u.String()
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, out, 0o644)
}

func newScheduler(dir, bin, configPath string, extraArgs []string) (*Scheduler, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args := []string{
		"--config=" + configPath,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(dir, "scheduler-certs"),
		"--v=2",
	}
	args = append(args, extraArgs...)
	return &Scheduler{
		Process: Process{Name: "kube-scheduler", Path: filepath.Join(bin, "kube-scheduler"), Args: args,
			LogPath: filepath.Join(dir, "kube-scheduler.log")},
		ConfigPath: configPath,
		healthURL:  fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
	}, nil
}

// URL is the scheduler's secure port, https://127.0.0.1:PORT (a self-signed certificate).
func (s *Scheduler) URL() string { return strings.TrimSuffix(s.healthURL, "/healthz") }

// WaitServing waits until the scheduler's secure port answers /healthz with 200.
func (s *Scheduler) WaitServing(ctx context.Context) error {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // its self-signed cert
	defer c.CloseIdleConnections()
	last := "no answer"
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.healthURL, nil)
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if !s.Running() {
			return fmt.Errorf("kube-scheduler exited; log tail:\n%s", TailFile(s.LogPath, 40))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-scheduler not serving: %s; log tail:\n%s", last, TailFile(s.LogPath, 40))
		case <-time.After(250 * time.Millisecond):
		}
	}
}
