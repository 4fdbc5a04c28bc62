package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// With WorkloadAwarePreemption (v1.36, alpha) kube-scheduler preempts for a whole PodGroup at once
// (framework/preemption/podgrouppreemption.go): it removes every pod of lower priority from its
// snapshot, runs the group's cycle again (filters, the extenders' included), then gives back the
// victims one at a time while the group still fits, and deletes the rest. The extender's preempt verb
// is never called, and the pod-by-pod PostFilter is off for group members.

// TestTopofitPodGroupsWorkloadAwarePreemption: two NVLink racks of two 8-GPU nodes. Rack r1 is full of
// four 4-GPU pods of a low PriorityClass; in r2, r2-n2 holds a pod of the high class (not preemptible by
// an equal priority) and r2-n1 is free. A PodGroup of two 8-GPU pods of the high class, each asking
// topofit for one rack (required), can only run in r1, after all four low pods are gone: counting
// GPUs alone, kube-scheduler would put one member on r2-n1 and preempt two pods, splitting the group.
// The members must bind whole in r1, the four low pods must be gone, the high pod untouched, and no
// GPU given twice.
func TestTopofitPodGroupsWorkloadAwarePreemption(t *testing.T) {
	groupPreemption(t, "e2e-high", "WorkloadAwarePreemption=true")
}

// TestTopofitPodGroupsPodPreemption: the same with GangScheduling alone (WorkloadAwarePreemption off):
// kube-scheduler preempts member by member (DefaultPreemption's PostFilter in the gang's cycle), asking
// topofit's preempt verb for each member; the PodGroup has no priority of its own (the field needs the
// gate), the members' PriorityClass decides.
func TestTopofitPodGroupsPodPreemption(t *testing.T) {
	groupPreemption(t, "")
}

// groupPreemption runs the scenario above with the Workload API and `gates` on; groupClass: the
// PodGroup's priorityClassName ("" for none).
func groupPreemption(t *testing.T, groupClass string, gates ...string) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, workloadAPI(ext, gates...))
	ctx := context.Background()
	c.CreateNodes(ctx, rackNodes(2, 2)...)
	time.Sleep(500 * time.Millisecond)
	createPriorityClasses(t, c, map[string]int32{"e2e-low": 10, "e2e-high": 1000})

	for i := 0; i < 4; i++ {
		spec := harness.GPUPod(fmt.Sprintf("low-%d", i), 4)
		spec.PriorityClassName = "e2e-low"
		spec.NodeName = fmt.Sprintf("r1-n%d", i/2+1)
		mustCreate(t, c, spec)
		scheduled(t, c, spec.Name, 4, 8)
	}
	keeper := harness.GPUPod("keeper", 8)
	keeper.PriorityClassName = "e2e-high"
	keeper.NodeName = "r2-n2"
	mustCreate(t, c, keeper)
	scheduled(t, c, "keeper", 8, 8)

	pg := workloadPodGroup(c, "wap", 2)
	pg.Spec.PriorityClassName = groupClass // the group's priority: what workload-aware preemption compares
	createPodGroup(t, c, pg)
	if got, err := c.Client.SchedulingV1alpha2().PodGroups(c.Namespace).Get(ctx, "wap", metav1.GetOptions{}); groupClass != "" &&
		(err != nil || got.Spec.Priority == nil || *got.Spec.Priority != 1000) {
		t.Fatalf("PodGroup wap: spec.priority not set to 1000 from its PriorityClass (%v)", err)
	}
	level := map[string]string{"topofit.io/group-level": "accelerator", "topofit.io/group-policy": "required"}
	createWorkloadMembers(t, c, "wap", 2, harness.PodSpec{GPUs: 8, Annotations: level, PriorityClassName: "e2e-high"})
	used := map[string]string{}
	for i := 0; i < 2; i++ {
		pod := fmt.Sprintf("wap-%d", i)
		node, _ := scheduled(t, c, pod, 8, 8)
		if !strings.HasPrefix(node, "r1-") {
			t.Errorf("member %s on %s: want both members in rack r1, the only rack that can hold them", pod, node)
		}
		if other, taken := used[node]; taken {
			t.Fatalf("members %s and %s share node %s", pod, other, node)
		}
		used[node] = pod
	}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("low-%d", i)
		if p, err := c.GetPod(ctx, name); err == nil && p.DeletionTimestamp == nil {
			t.Errorf("%s survived on %s", name, p.Spec.NodeName)
		}
	}
	if p, err := c.GetPod(ctx, "keeper"); err != nil || p.DeletionTimestamp != nil || p.Spec.NodeName != "r2-n2" {
		t.Errorf("keeper (priority equal to the group's) was disturbed: %v", err)
	}
	for _, l := range harness.GrepFile(ext.LogPath(), "group=e2e/wap ") {
		t.Log(l)
	}
}

func createPriorityClasses(t *testing.T, c *harness.Cluster, classes map[string]int32) {
	t.Helper()
	for name, value := range classes {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(context.Background(), pc,
			metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
