package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"topofit.dev/e2e/harness"
)

// TestTopofitGroupsSinglePodKeepsRack: once a group has been planned, a pod of no group keeps off the
// last rack a group of that shape fits (docs/groups.md, "Pods of no group"), through the real
// kube-scheduler and kube-apiserver. Six fake 8-GPU nodes in three NVLink racks of two
// (nvidia.com/gpu.clique r1..r3): r3-n1 is taken by an 8-GPU pod, and r2-n1 runs a CPU-only pod, so
// that topofit's tie-break rule alone (fit-then-pack: the higher CPU share first) would send a 1-GPU
// pod to r2-n1. A 2 x 8-GPU group lands in r1; a 1-GPU pod then goes to r3-n2 - r3 is broken already -
// and not into r2, the only rack left that holds another such group.
func TestTopofitGroupsSinglePodKeepsRack(t *testing.T) {
	c, _ := startTopofit(t, rackNodes(3, 2)...)
	ctx := context.Background()

	full := harness.GPUPod("full", 8)
	full.NodeName = "r3-n1"
	mustCreate(t, c, full)
	scheduled(t, c, "full", 8, 8)
	busy := harness.GPUPod("cpu-busy", 0)
	busy.CPU = "2"
	busy.NodeName = "r2-n1"
	mustCreate(t, c, busy)
	if _, err := c.WaitForPod(ctx, "cpu-busy", harness.DefaultWait, "bound",
		func(p *corev1.Pod) bool { return p.Spec.NodeName != "" }); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < 2; i++ {
		mustCreate(t, c, rackMember(fmt.Sprintf("g-%d", i), "g", 2))
	}
	for i := 0; i < 2; i++ {
		if node, _ := scheduled(t, c, fmt.Sprintf("g-%d", i), 8, 8); !strings.HasPrefix(node, "r1-") {
			t.Fatalf("group member g-%d on %s, want rack r1", i, node)
		}
	}

	mustCreate(t, c, harness.GPUPod("single", 1))
	if node, _ := scheduled(t, c, "single", 1, 8); node != "r3-n2" {
		t.Errorf("a 1-GPU pod of no group on %s, want r3-n2 (rack r3 is broken already; r2 is the last "+
			"rack with room for another 2 x 8-GPU group)", node)
	}
}
