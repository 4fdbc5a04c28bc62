package tests

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"topofit.dev/e2e/harness"
)

// TestSmokeFakeExtender proves the harness and the real binaries without topofit: kube-scheduler
// calls an extender served by the test (filter, prioritize, bind), the extender's bind creates the
// Binding, its filter reasons reach the FailedScheduling event, pods without GPUs bypass it, and
// scheduling goes on after the apiserver restarts.
func TestSmokeFakeExtender(t *testing.T) {
	const rejectReason = "fake-extender: no NVLink-connected set of 4 GPUs"
	fake := &harness.FakeExtender{
		Filter: func(pod *corev1.Pod, node string) (bool, string) {
			if pod.Annotations["e2e/reject"] == "all" {
				return false, rejectReason
			}
			return true, ""
		},
		Score: func(pod *corev1.Pod, node string) int64 {
			if node == "gpu-b" {
				return 10
			}
			return 0
		},
	}
	// testdata/scheduler-config.yaml calls prioritize too (the deployed config is filter-only), so
	// the fake extender's scores decide.
	c := harness.Start(t, harness.Options{Extender: fake,
		SchedulerConfig: filepath.Join(harness.ModuleRoot(), "testdata", "scheduler-config.yaml")})
	ctx := context.Background()
	c.CreateNodes(ctx,
		harness.GPUNode("gpu-a", 8, "dgx1-v100"),
		harness.GPUNode("gpu-b", 8, "hgx-a100-8"),
		harness.NodeSpec{Name: "cpu-only"},
	)

	t.Run("gpu pod bound by the extender on its best-scored node", func(t *testing.T) {
		if _, err := c.CreatePod(ctx, harness.GPUPod("two-gpus", 2)); err != nil {
			t.Fatal(err)
		}
		p, err := c.WaitForPodScheduled(ctx, "two-gpus")
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "gpu-b" {
			t.Errorf("pod on %s, want gpu-b (the extender's score 10 x weight 5)", p.Spec.NodeName)
		}
		if got := fake.BoundTo(c.Namespace, "two-gpus"); got != p.Spec.NodeName {
			t.Errorf("extender bound pod to %q; pod is on %q", got, p.Spec.NodeName)
		}
		for _, verb := range []string{"filter", "prioritize", "bind"} {
			if fake.Calls(verb) == 0 {
				t.Errorf("scheduler never called %s", verb)
			}
		}
	})

	t.Run("extender reasons reach FailedScheduling", func(t *testing.T) {
		spec := harness.GPUPod("nowhere", 4)
		spec.Annotations = map[string]string{"e2e/reject": "all"}
		if _, err := c.CreatePod(ctx, spec); err != nil {
			t.Fatal(err)
		}
		ev, err := c.WaitForFailedScheduling(ctx, "nowhere", 60*time.Second, rejectReason)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FailedScheduling: %s", ev.Message)
		// cpu-only is rejected in-tree (no nvidia.com/gpu) and never reaches the extender.
		if !strings.Contains(ev.Message, "0/3 nodes are available") {
			t.Errorf("unexpected FailedScheduling message %q", ev.Message)
		}
		if err := c.DeletePod(ctx, "nowhere"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("pods without GPUs bypass the extender", func(t *testing.T) {
		binds := fake.Calls("bind")
		if _, err := c.CreatePod(ctx, harness.GPUPod("no-gpu", 0)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitForPodScheduled(ctx, "no-gpu"); err != nil {
			t.Fatal(err)
		}
		if fake.Calls("bind") != binds || fake.BoundTo(c.Namespace, "no-gpu") != "" {
			t.Errorf("extender was asked to bind a pod without nvidia.com/gpu (managedResources)")
		}
	})

	t.Run("scheduling goes on after an apiserver restart", func(t *testing.T) {
		start := time.Now()
		if err := c.RestartAPIServer(ctx, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("apiserver back after %v", time.Since(start).Round(time.Millisecond))
		if _, err := c.CreatePod(ctx, harness.GPUPod("after-restart", 1)); err != nil {
			t.Fatal(err)
		}
		p, err := c.WaitForPodScheduled(ctx, "after-restart")
		if err != nil {
			t.Fatal(err)
		}
		if got := fake.BoundTo(c.Namespace, "after-restart"); got != p.Spec.NodeName || got != "gpu-b" {
			t.Errorf("after restart: pod on %q, extender bound it to %q; want gpu-b", p.Spec.NodeName, got)
		}
		if err := c.DeletePod(ctx, "after-restart"); err != nil {
			t.Fatal(err)
		}
	})
}
