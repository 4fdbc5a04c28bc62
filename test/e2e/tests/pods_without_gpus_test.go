package tests

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// TestPodsWithoutGPUs: the deployed scheduler configuration's second extender entry (no
// managedResources, prioritizeVerb prioritize-pods-without-gpus, ignorable) in the real kube-scheduler
// with the real topofit. Two empty 8-GPU nodes: "small" (64 cores, 256Gi) and "big" (128 cores,
// 512Gi); topofit has seen 8-GPU pods that need 60 cores. For a pod of 8 cores and 32Gi without GPUs,
// kube-scheduler's in-tree scores (MostAllocated: 8/64 of small against 8/128 of big, balanced alike)
// pick small, which would leave 56 cores there: small's 8 GPUs lost to the 8-GPU pods. topofit scores
// big 10 and small 0 (FragmentationGradient), 500 points in kube-scheduler's sum. So the pod goes to
// big with topofit, and to small with topofit stopped - where it is still scheduled (the entry is
// ignorable; prioritize errors are skipped) while a GPU pod waits for topofit.
func TestPodsWithoutGPUs(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, harness.Options{Extender: ext}) // manifests/base/scheduler-config.yaml
	ctx := context.Background()
	small := harness.GPUNode("small", 8, "hgx-a100-8")
	small.CPU, small.Memory = "64", "256Gi"
	big := harness.GPUNode("big", 8, "hgx-a100-8")
	big.CPU, big.Memory = "128", "512Gi"
	c.CreateNodes(ctx, small, big)
	time.Sleep(500 * time.Millisecond) // topofit's informers see the nodes

	// The workload topofit learns: an 8-GPU pod with 60 cores (pinned to big, then deleted, so both
	// nodes are empty again and the estimate keeps its shape).
	createPod(t, c, "learn-8gpu", 8, "60", "128Gi", "big")
	if node, _ := scheduled(t, c, "learn-8gpu", 8, 8); node != "big" {
		t.Fatalf("learning pod on %s, want big (its nodeSelector)", node)
	}
	mustDelete(t, c, "learn-8gpu")
	waitTopofitFree(t, c, "big", 8)

	t.Run("topofit scores the CPU pod onto the node that keeps the 8-GPU pods' cores", func(t *testing.T) {
		createPod(t, c, "cpu-with-topofit", 0, "8", "32Gi", "")
		p, err := c.WaitForPodScheduled(ctx, "cpu-with-topofit")
		if err != nil {
			t.Fatal(err)
		}
		if p.Spec.NodeName != "big" {
			t.Errorf("pod without GPUs on %s, want big (topofit's best score)", p.Spec.NodeName)
		}
		// The verb was called with this pod and chose big.
		line := decisionLine(t, ext.LogPath(), "prioritize-pods-without-gpus", c.Namespace+"/cpu-with-topofit")
		if !strings.Contains(line, "best_node=big ") || !strings.Contains(line, "best_score=10 ") {
			t.Errorf("topofit's decision: %s; want best_node=big best_score=10", line)
		}
		t.Logf("topofit: %s", line)
		m := topofitMetrics(t, c)
		if n := metricValue(m, `topofit_decisions_total{verb="prioritize-pods-without-gpus",outcome="scored"}`); n < 2 {
			t.Errorf("topofit scored %v nodes for pods without GPUs, want >= 2", n)
		}
		if n := metricValue(m, `topofit_request_errors_total{verb="prioritize-pods-without-gpus"}`); n != 0 {
			t.Errorf("%v errors on prioritize-pods-without-gpus", n)
		}
		mustDelete(t, c, "cpu-with-topofit")
	})

	t.Run("a GPU pod is placed by the GPU entry; the second entry gives it no score", func(t *testing.T) {
		createPod(t, c, "gpu-with-topofit", 2, "4", "16Gi", "")
		scheduled(t, c, "gpu-with-topofit", 2, 8)
		// Both nodes tie for a 2-GPU pod, so filter passes both and kube-scheduler calls the second
		// entry too, which topofit answers with [].
		m := topofitMetrics(t, c)
		if n := metricValue(m, `topofit_decisions_total{verb="prioritize-pods-without-gpus",outcome="gpu_pod"}`); n < 1 {
			t.Errorf("the second entry was not called for the GPU pod (gpu_pod decisions: %v)", n)
		}
		if n := metricValue(m, `topofit_request_errors_total{verb="prioritize-pods-without-gpus"}`); n != 0 {
			t.Errorf("%v errors on prioritize-pods-without-gpus", n)
		}
		mustDelete(t, c, "gpu-with-topofit")
		waitTopofitFree(t, c, "small", 8)
		waitTopofitFree(t, c, "big", 8)
	})

	t.Run("topofit stopped: pods without GPUs still scheduled (in-tree choice), GPU pods wait", func(t *testing.T) {
		if err := ext.Stop(false); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		createPod(t, c, "cpu-without-topofit", 0, "8", "32Gi", "")
		p, err := c.WaitForPodScheduled(ctx, "cpu-without-topofit")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("pod without GPUs bound to %s %v after its creation, topofit down", p.Spec.NodeName,
			time.Since(start).Round(time.Millisecond))
		if p.Spec.NodeName != "small" {
			t.Errorf("pod without GPUs on %s with topofit down, want small (kube-scheduler's MostAllocated)", p.Spec.NodeName)
		}
		createPod(t, c, "gpu-without-topofit", 1, "4", "16Gi", "")
		ev, err := c.WaitForFailedScheduling(ctx, "gpu-without-topofit", 30*time.Second, "/scheduler/filter")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("GPU pod waits: %s", ev.Message)
		// topofit back: the GPU pod is placed on kube-scheduler's next try.
		if err := ext.Start(ctx, c); err != nil {
			t.Fatal(err)
		}
		scheduled(t, c, "gpu-without-topofit", 1, 8)
	})
}

// createPod creates a pod of the topofit-scheduler profile requesting gpus GPUs (limits) and cpu and
// memory (requests), pinned to node when not "".
func createPod(t *testing.T, c *harness.Cluster, name string, gpus int, cpu, memory, node string) {
	t.Helper()
	p := harness.PodObject(c.Namespace, harness.PodSpec{Name: name, GPUs: gpus, CPU: cpu, NodeName: node})
	p.Spec.Containers[0].Resources.Requests[corev1.ResourceMemory] = resource.MustParse(memory)
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// topofitMetrics reads topofit's /metrics (the harness runs it without --ops-listen).
func topofitMetrics(t *testing.T, c *harness.Cluster) string {
	t.Helper()
	resp, err := http.Get("http://" + c.ExtenderAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// metricValue is the value of the sample named exactly series (name and labels), 0 when absent.
func metricValue(metrics, series string) float64 {
	for _, line := range strings.Split(metrics, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}

// waitTopofitFree waits until topofit's query API shows node with free GPUs free (its pod watch has
// seen the deletions).
func waitTopofitFree(t *testing.T, c *harness.Cluster, node string, free int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	last := ""
	for time.Now().Before(deadline) {
		if resp, err := http.Get("http://" + c.ExtenderAddr + "/api/v1/nodes/" + node); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			last = string(b)
			var n struct {
				Free int `json:"free"`
			}
			if json.Unmarshal(b, &n) == nil && n.Free == free {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("topofit does not show %d free GPUs on %s after 30s: %s", free, node, last)
}

// decisionLine is topofit's decision log line for verb and pod (namespace/name), failing the test when
// there is none.
func decisionLine(t *testing.T, logPath, verb, pod string) string {
	t.Helper()
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, `msg="decision" verb=`+verb+" ") && strings.Contains(line, "pod="+pod+" ") {
			return line
		}
	}
	t.Fatalf("no decision of %s for %s in %s", verb, pod, logPath)
	return ""
}
