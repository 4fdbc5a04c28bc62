package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"

	"topofit.dev/e2e/harness"
)

// TestTopofitPodGroupsTopologyAware: kube-scheduler v1.36.3 with TopologyAwareWorkloadScheduling on
// besides the Workload API gates. The blocks carry topograph v1.x's label for the switch closest to the
// node, fabric.topograph.run/tier-0 (topofit's default block level). A PodGroup whose
// schedulingConstraints.topology names that label is tried by kube-scheduler one domain at a time (each block's nodes alone), calling topofit's filter
// for each; topofit plans the group once, in the first whole block (r1 has a node taken), and its
// members must land there whole - the domains kube-scheduler tries first, without the slot's node,
// must not make topofit plan the group elsewhere or twice.
func TestTopofitPodGroupsTopologyAware(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, workloadAPI(ext, "TopologyAwareWorkloadScheduling=true"))
	ctx := context.Background()
	const tier0 = "fabric.topograph.run/tier-0"
	c.CreateNodes(ctx, labelledBlockNodes(tier0, 3, 2)...)
	time.Sleep(500 * time.Millisecond)
	solo := harness.GPUPod("solo", 8)
	solo.NodeName = "r1-n1"
	mustCreate(t, c, solo)
	scheduled(t, c, "solo", 8, 8)

	pg := workloadPodGroup(c, "tas", 2)
	pg.Spec.SchedulingConstraints = &schedulingv1alpha2.PodGroupSchedulingConstraints{
		Topology: []schedulingv1alpha2.TopologyConstraint{{Key: tier0}}}
	createPodGroup(t, c, pg)
	createWorkloadMembers(t, c, "tas", 2, harness.PodSpec{GPUs: 8})
	rack := ""
	for i := 0; i < 2; i++ {
		node, _ := scheduled(t, c, fmt.Sprintf("tas-%d", i), 8, 8)
		r := strings.SplitN(node, "-", 2)[0]
		if r == "r1" || (rack != "" && r != rack) {
			t.Fatalf("member tas-%d on %s (rack of the other: %q): want both in one whole block", i, node, rack)
		}
		rack = r
	}
	if n := plannedCount(ext.LogPath(), "e2e/tas"); n != 1 {
		t.Errorf("group e2e/tas planned %d times, want once", n)
	}
	for _, l := range harness.GrepFile(ext.LogPath(), "group=e2e/tas ") {
		t.Log(l)
	}
}
