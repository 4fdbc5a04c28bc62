package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1alpha2 "k8s.io/api/scheduling/v1alpha2"
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

	createRackGang(t, c, "wap", groupClass) // the group's priority: what workload-aware preemption compares
	if got, err := c.Client.SchedulingV1alpha2().PodGroups(c.Namespace).Get(ctx, "wap", metav1.GetOptions{}); groupClass != "" &&
		(err != nil || got.Spec.Priority == nil || *got.Spec.Priority != 1000) {
		t.Fatalf("PodGroup wap: spec.priority not set to 1000 from its PriorityClass (%v)", err)
	}
	wantGangInRack(t, c, "wap", "r1", "the only rack that can hold them")
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

// TestTopofitPodGroupsPreemptionVictimGangs: workload-aware preemption weighs a PodGroup with
// disruptionMode PodGroup as one victim of the PodGroup's priority, whatever its pods' own priorities
// (v1.36.3, framework/preemption/types.go), and preempts all of its pods or none. Three NVLink racks of
// two 8-GPU nodes, every GPU held:
//
//	r1: both members of PodGroup "protected" (priority 2000; its pods state none, so 0);
//	r2: r2-n1 a member of PodGroup "lowgang" (priority 10; its pods again 0), r2-n2 a single pod of 10;
//	r3: r3-n1 lowgang's other member, r3-n2 a single pod of 1000.
//
// A gang of two 8-GPU pods of priority 1000, one rack required, can only have r2: r1's gang outranks
// it, r3 keeps a pod of its own priority. Counting the pods' priorities, topofit would lead it into r1
// (the only rack whose pods are all below 1000), which kube-scheduler never frees: the gang would stay
// Pending. It must bind whole in r2, with lowgang gone whole (its member in r3 too) and the rest kept.
// The gang members that hold GPUs are bound by spec.nodeName, without a scheduler.
func TestTopofitPodGroupsPreemptionVictimGangs(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, workloadAPI(ext, "WorkloadAwarePreemption=true"))
	ctx := context.Background()
	c.CreateNodes(ctx, rackNodes(3, 2)...)
	time.Sleep(500 * time.Millisecond)
	createPriorityClasses(t, c, map[string]int32{"e2e-low": 10, "e2e-high": 1000, "e2e-top": 2000})
	whole := schedulingv1alpha2.DisruptionModePodGroup
	for name, class := range map[string]string{"protected": "e2e-top", "lowgang": "e2e-low"} {
		pg := workloadPodGroup(c, name, 2)
		pg.Spec.PriorityClassName = class
		pg.Spec.DisruptionMode = &whole
		createPodGroup(t, c, pg)
	}
	bindMember(t, c, "protected", "protected-0", "r1-n1")
	bindMember(t, c, "protected", "protected-1", "r1-n2")
	bindMember(t, c, "lowgang", "lowgang-0", "r2-n1")
	bindMember(t, c, "lowgang", "lowgang-1", "r3-n1")
	for name, at := range map[string][2]string{"low-single": {"r2-n2", "e2e-low"}, "keeper": {"r3-n2", "e2e-high"}} {
		spec := harness.GPUPod(name, 8)
		spec.NodeName, spec.PriorityClassName = at[0], at[1]
		mustCreate(t, c, spec)
		scheduled(t, c, name, 8, 8)
	}

	createRackGang(t, c, "wap", "e2e-high")
	wantGangInRack(t, c, "wap", "r2", "the only rack preemption can free")
	for _, name := range []string{"lowgang-0", "lowgang-1", "low-single"} {
		if p, err := c.GetPod(ctx, name); err == nil && p.DeletionTimestamp == nil {
			t.Errorf("%s survived on %s", name, p.Spec.NodeName)
		}
	}
	for _, name := range []string{"protected-0", "protected-1", "keeper"} {
		if p, err := c.GetPod(ctx, name); err != nil || p.DeletionTimestamp != nil {
			t.Errorf("%s (not below the gang's priority) was preempted: %v", name, err)
		}
	}
	for _, l := range harness.GrepFile(ext.LogPath(), "group=e2e/wap ") {
		t.Log(l)
	}
}

// createRackGang creates Workload API PodGroup `name` (a gang of 2, of PriorityClass `class`; "" for
// none) and its members <name>-0 and <name>-1: 8 GPUs each, PriorityClass e2e-high, each asking topofit
// for one NVLink rack (required).
func createRackGang(t *testing.T, c *harness.Cluster, name, class string) {
	t.Helper()
	pg := workloadPodGroup(c, name, 2)
	pg.Spec.PriorityClassName = class
	createPodGroup(t, c, pg)
	level := map[string]string{"topofit.io/group-level": "accelerator", "topofit.io/group-policy": "required"}
	createWorkloadMembers(t, c, name, 2, harness.PodSpec{GPUs: 8, Annotations: level, PriorityClassName: "e2e-high"})
}

// wantGangInRack waits for both members of `group` to bind, and fails unless each has a node of its
// own in rack `rack` (`why` says why that rack).
func wantGangInRack(t *testing.T, c *harness.Cluster, group, rack, why string) {
	t.Helper()
	used := map[string]string{}
	for i := 0; i < 2; i++ {
		pod := fmt.Sprintf("%s-%d", group, i)
		node, _ := scheduled(t, c, pod, 8, 8)
		if !strings.HasPrefix(node, rack+"-") {
			t.Errorf("member %s on %s: want both members in rack %s, %s", pod, node, rack, why)
		}
		if other, taken := used[node]; taken {
			t.Fatalf("members %s and %s share node %s", pod, other, node)
		}
		used[node] = pod
	}
}

// bindMember creates an 8-GPU pod `name` of PodGroup `group` already bound to `node` (spec.nodeName: no
// scheduler places it).
func bindMember(t *testing.T, c *harness.Cluster, group, name, node string) {
	t.Helper()
	pod := harness.PodObject(c.Namespace, harness.GPUPod(name, 8))
	pod.Spec.NodeName = node
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create bound member %s: %v", name, err)
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
