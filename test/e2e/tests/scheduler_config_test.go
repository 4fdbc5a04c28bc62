package tests

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	"topofit.dev/e2e/harness"
)

// writeSchedulerConfig writes the deployed kube-scheduler configuration
// (manifests/base/scheduler-config.yaml) to path, changed by edit first (nil: as deployed).
func writeSchedulerConfig(t *testing.T, path string, edit func(cfg map[string]any)) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(harness.ModuleRoot(), "..", "..", "manifests", "base", "scheduler-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
}
