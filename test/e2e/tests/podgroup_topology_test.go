package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// TestTopofitPodGroupsTopologyAware: kube-scheduler v1.36.3 with TopologyAwareWorkloadScheduling on
// besides the Workload API gates. A PodGroup whose schedulingConstraints.topology names the block label
// is tried by kube-scheduler one domain at a time (each block's nodes alone), calling topofit's filter
// for each; topofit plans the group once, in the first whole block (r1 has a node taken), and its
// members must land there whole - the domains kube-scheduler tries first, without the slot's node,
// must not make topofit plan the group elsewhere or twice.
func TestTopofitPodGroupsTopologyAware(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	gates := "--feature-gates=GenericWorkload=true,GangScheduling=true,TopologyAwareWorkloadScheduling=true"
	c := harness.Start(t, harness.Options{Extender: ext,
		APIServerArgs: []string{gates, "--runtime-config=scheduling.k8s.io/v1alpha2=true"},
		SchedulerArgs: []string{gates}})
	ctx := context.Background()
	var nodes []harness.NodeSpec
	for r := 1; r <= 3; r++ {
		for n := 1; n <= 2; n++ {
			node := harness.GPUNode(fmt.Sprintf("r%d-n%d", r, n), 8, "hgx-h100-8")
			node.Labels = map[string]string{blockLabel: fmt.Sprintf("r%d", r)}
			nodes = append(nodes, node)
		}
	}
	c.CreateNodes(ctx, nodes...)
	time.Sleep(500 * time.Millisecond)
	solo := harness.GPUPod("solo", 8)
	solo.NodeName = "r1-n1"
	mustCreate(t, c, solo)
	scheduled(t, c, "solo", 8, 8)

	pg := &schedulingv1alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: "tas", Namespace: c.Namespace},
		Spec: schedulingv1alpha2.PodGroupSpec{
			SchedulingPolicy: schedulingv1alpha2.PodGroupSchedulingPolicy{
				Gang: &schedulingv1alpha2.GangSchedulingPolicy{MinCount: 2}},
			SchedulingConstraints: &schedulingv1alpha2.PodGroupSchedulingConstraints{
				Topology: []schedulingv1alpha2.TopologyConstraint{{Key: blockLabel}}},
		},
	}
	if _, err := c.Client.SchedulingV1alpha2().PodGroups(c.Namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create PodGroup with a topology constraint: %v", err)
	}
	for i := 0; i < 2; i++ {
		pod := harness.PodObject(c.Namespace, harness.PodSpec{Name: fmt.Sprintf("tas-%d", i), GPUs: 8})
		name := "tas"
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
		if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
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
