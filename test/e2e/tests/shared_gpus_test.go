package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
)

// GFD's labels of shared nodes (docs/shared-gpus.md): an 8-GPU A100 node time-sliced 4 ways (32
// devices of nvidia.com/gpu) and one split into 1g.10gb MIG devices, single strategy (7 per GPU, 56).
func timeSlicedNode(name string) harness.NodeSpec {
	return harness.NodeSpec{Name: name, GPUs: 32, Labels: map[string]string{
		harness.LabelGPUProduct: "NVIDIA-A100-SXM4-80GB-SHARED", harness.LabelGPUCount: "8",
		"nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}}
}

func migNode(name string) harness.NodeSpec {
	return harness.NodeSpec{Name: name, GPUs: 56, Labels: map[string]string{
		harness.LabelGPUProduct: "NVIDIA-A100-SXM4-80GB-MIG-1g.10gb", harness.LabelGPUCount: "56",
		"nvidia.com/gpu.replicas": "1", "nvidia.com/mig.strategy": "single"}}
}

// physical maps device indices (topofit.io/gpu-ids) to their physical GPUs: device d is GPU d/perGPU.
func physical(ids []int, perGPU int) map[int]int {
	gpus := map[int]int{}
	for _, d := range ids {
		gpus[d/perGPU]++
	}
	return gpus
}

// testSharedGPUs adds a time-sliced and a MIG node to a cluster of plain ones and places pods pinned
// to them through the real kube-scheduler: replicas land on distinct physical GPUs, a pod wanting
// more distinct GPUs than the node has is refused with that reason, MIG devices are packed best fit
// (whole GPUs stay free), and no device is given twice.
func testSharedGPUs(t *testing.T, c *harness.Cluster) {
	ctx := context.Background()
	c.CreateNodes(ctx, timeSlicedNode("ts-a100"), migNode("mig-a100"))
	time.Sleep(500 * time.Millisecond)
	held := map[string]string{}
	place := func(name, node string, n, devices int, annotations map[string]string) []int {
		t.Helper()
		spec := harness.GPUPod(name, n)
		spec.NodeName, spec.Annotations = node, annotations
		mustCreate(t, c, spec)
		got, ids := scheduled(t, c, name, n, devices)
		if got != node {
			t.Fatalf("%s on %s, pinned to %s", name, got, node)
		}
		for _, d := range ids {
			k := fmt.Sprintf("%s/%d", node, d)
			if other, dup := held[k]; dup {
				t.Errorf("%s: device %s already %s's", name, k, other)
			}
			held[k] = name
		}
		return ids
	}
	for _, name := range []string{"ts-a", "ts-b"} {
		ids := place(name, "ts-a100", 4, 32, nil)
		if gpus := physical(ids, 4); len(gpus) != 4 {
			t.Errorf("%s got devices %v: on GPUs %v, want 4 distinct GPUs", name, ids, gpus)
		}
	}
	packed := place("ts-packed", "ts-a100", 8, 32, map[string]string{"topofit.io/replica-placement": "packed"})
	t.Logf("packed pod of 8 replicas: devices %v on GPUs %v", packed, physical(packed, 4))

	wide := harness.GPUPod("ts-wide", 9)
	wide.NodeName = "ts-a100"
	mustCreate(t, c, wide)
	ev, err := c.WaitForFailedScheduling(ctx, "ts-wide", 60*time.Second, "on distinct GPUs")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("9 distinct GPUs on an 8-GPU node: %s", ev.Message)

	small := place("mig-a", "mig-a100", 2, 56, nil)
	big := place("mig-b", "mig-a100", 7, 56, nil)
	if gpus := physical(append(small, big...), 7); len(gpus) != 2 {
		t.Errorf("MIG pods of 2 and 7 devices got %v and %v: on GPUs %v, want 2 GPUs (best fit)", small, big, gpus)
	}
	if !strings.Contains(ev.Message, "9 GPUs") {
		t.Errorf("FailedScheduling does not name the request: %q", ev.Message)
	}
}
