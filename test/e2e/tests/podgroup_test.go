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

// workloadAPI: a cluster's options with the Kubernetes v1.36 Workload API on and `ext` as its extender:
// kube-apiserver serves scheduling.k8s.io/v1alpha2 and both components run the alpha gates
// GenericWorkload and GangScheduling, plus `gates` ("WorkloadAwarePreemption=true"), so kube-scheduler
// schedules a PodGroup's pods as a gang (schedule_one_podgroup.go: one cycle for the whole group, each
// member assumed before the next one is filtered, Permit holding them until minCount are assumed,
// then concurrent binds).
func workloadAPI(ext harness.Extender, gates ...string) harness.Options {
	all := "--feature-gates=" + strings.Join(append([]string{"GenericWorkload=true", "GangScheduling=true"}, gates...), ",")
	return harness.Options{Extender: ext, APIServerArgs: []string{all, "--runtime-config=scheduling.k8s.io/v1alpha2=true"},
		SchedulerArgs: []string{all}}
}

const blockLabel = "network.topology.nvidia.com/block"

// The coscheduling PodGroup CRD of scheduler-plugins, reduced to what the test uses: group
// scheduling.x-k8s.io, version v1alpha1, kind PodGroup, spec.minMember.
const coschedulingCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"podgroups.scheduling.x-k8s.io"},
 "spec":{"group":"scheduling.x-k8s.io","scope":"Namespaced",
  "names":{"kind":"PodGroup","listKind":"PodGroupList","plural":"podgroups","singular":"podgroup"},
  "versions":[{"name":"v1alpha1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",
    "properties":{"minMember":{"type":"integer","format":"int32"}}}}}}}]}}`

// Three racks (blocks) of two 8-GPU nodes; three gangs of two 8-GPU pods, each asking for one block
// (topofit.io/group-level: block, required): a Workload API PodGroup (minCount 2), a group of topofit's
// annotations, and a coscheduling PodGroup (minMember 2). Each must land whole in a rack of its own: a
// member bound outside its gang's rack, a node given two pods or a group planned twice fails the test.
// topofit starts while the coscheduling CRD is not installed (its watch answered 404, startup goes on)
// and is restarted once the CRD is there, which also shows a restart keeps the planned groups.
func TestTopofitPodGroups(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, workloadAPI(ext))
	ctx := context.Background()
	c.CreateNodes(ctx, blockNodes(3, 2)...)
	time.Sleep(500 * time.Millisecond)

	level := map[string]string{"topofit.io/group-level": "block", "topofit.io/group-policy": "required"}
	createPodGroup(t, c, workloadPodGroup(c, "wl", 2))
	createWorkloadMembers(t, c, "wl", 2, harness.PodSpec{GPUs: 8, Annotations: level})
	annotated := map[string]string{"topofit.io/group": "ann", "topofit.io/group-size": "2"}
	for k, v := range level {
		annotated[k] = v
	}
	for i := 0; i < 2; i++ {
		mustCreate(t, c, harness.PodSpec{Name: fmt.Sprintf("ann-%d", i), GPUs: 8, Annotations: annotated})
	}
	racks := map[string]string{} // group -> rack
	used := map[string]string{}  // node -> pod
	placedWhole(t, c, "wl", racks, used)
	placedWhole(t, c, "ann", racks, used)
	if lines := harness.GrepFile(ext.LogPath(), "is not served (404"); len(lines) != 1 {
		t.Errorf("topofit logged the missing coscheduling CRD %d times, want once:\n%s", len(lines),
			strings.Join(lines, "\n"))
	}

	installCoschedulingCRD(t, c)
	if err := ext.Stop(false); err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	createCoschedulingPodGroup(t, c, "cs", 2)
	for i := 0; i < 2; i++ {
		spec := harness.PodSpec{Name: fmt.Sprintf("cs-%d", i), GPUs: 8, Annotations: level,
			Labels: map[string]string{"scheduling.x-k8s.io/pod-group": "cs"}}
		mustCreate(t, c, spec)
	}
	placedWhole(t, c, "cs", racks, used)
	for _, g := range []string{"e2e/wl", "e2e/ann"} {
		if n := plannedCount(ext.LogPath(), g); n != 1 {
			t.Errorf("group %s planned %d times, want once (a restart re-plans nothing already bound)", g, n)
		}
	}
	if n := plannedCount(ext.LogPath(), "e2e/cs"); n != 1 {
		t.Errorf("group e2e/cs planned %d times, want once", n)
	}
}

// placedWhole waits for both members of `group` (pods group-0, group-1) to be bound with 8 GPUs, and
// checks they share one rack that no other group has and nodes no other pod has.
func placedWhole(t *testing.T, c *harness.Cluster, group string, racks, used map[string]string) {
	t.Helper()
	rack := ""
	for i := 0; i < 2; i++ {
		pod := fmt.Sprintf("%s-%d", group, i)
		node, _ := scheduled(t, c, pod, 8, 8)
		if other, taken := used[node]; taken {
			t.Fatalf("pod %s bound to node %s, which pod %s holds", pod, node, other)
		}
		used[node] = pod
		r := strings.SplitN(node, "-", 2)[0]
		if rack != "" && r != rack {
			t.Fatalf("group %s split over racks %s and %s", group, rack, r)
		}
		rack = r
	}
	for other, r := range racks {
		if r == rack {
			t.Fatalf("groups %s and %s share rack %s", group, other, rack)
		}
	}
	racks[group] = rack
}

// plannedCount counts topofit's filter decisions that planned `key` (logfmt: group=KEY ... planned=...).
func plannedCount(logPath, key string) int {
	n := 0
	for _, l := range harness.GrepFile(logPath, "group="+key+" ") {
		if strings.Contains(l, " planned=") {
			n++
		}
	}
	return n
}

// blockNodes: fake 8-GPU nodes r<block>-n<n> (hgx-h100-8), `perBlock` in each of blocks r1..r<blocks>
// (network.topology.nvidia.com/block).
func blockNodes(blocks, perBlock int) []harness.NodeSpec {
	return labelledBlockNodes(blockLabel, blocks, perBlock)
}

// labelledBlockNodes: blockNodes with the block named by label `key`.
func labelledBlockNodes(key string, blocks, perBlock int) []harness.NodeSpec {
	var nodes []harness.NodeSpec
	for r := 1; r <= blocks; r++ {
		for n := 1; n <= perBlock; n++ {
			node := harness.GPUNode(fmt.Sprintf("r%d-n%d", r, n), 8, "hgx-h100-8")
			node.Labels = map[string]string{key: fmt.Sprintf("r%d", r)}
			nodes = append(nodes, node)
		}
	}
	return nodes
}

// workloadPodGroup: a Workload API PodGroup `name`, a gang of minCount, for the caller to add to.
func workloadPodGroup(c *harness.Cluster, name string, minCount int32) *schedulingv1alpha2.PodGroup {
	return &schedulingv1alpha2.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace},
		Spec: schedulingv1alpha2.PodGroupSpec{SchedulingPolicy: schedulingv1alpha2.PodGroupSchedulingPolicy{
			Gang: &schedulingv1alpha2.GangSchedulingPolicy{MinCount: minCount}}},
	}
}

func createPodGroup(t *testing.T, c *harness.Cluster, pg *schedulingv1alpha2.PodGroup) {
	t.Helper()
	if _, err := c.Client.SchedulingV1alpha2().PodGroups(c.Namespace).Create(context.Background(), pg,
		metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Workload API PodGroup %s: %v", pg.Name, err)
	}
}

// createWorkloadMembers creates pods <group>-0 .. <group>-<n-1> as `spec` (its Name aside), each naming
// PodGroup `group` in spec.schedulingGroup.podGroupName.
func createWorkloadMembers(t *testing.T, c *harness.Cluster, group string, n int, spec harness.PodSpec) {
	t.Helper()
	for i := 0; i < n; i++ {
		spec.Name = fmt.Sprintf("%s-%d", group, i)
		pod := harness.PodObject(c.Namespace, spec)
		pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &group}
		if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create member %s: %v", spec.Name, err)
		}
	}
}

func installCoschedulingCRD(t *testing.T, c *harness.Cluster) {
	t.Helper()
	ctx := context.Background()
	rest := c.Client.Discovery().RESTClient()
	if err := rest.Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body([]byte(coschedulingCRD)).Do(ctx).Error(); err != nil {
		t.Fatalf("create the coscheduling CRD: %v", err)
	}
	// Served once the CRD is Established: its list answers 200.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := rest.Get().AbsPath("/apis/scheduling.x-k8s.io/v1alpha1/podgroups").Do(ctx).Error()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the coscheduling CRD is not served: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func createCoschedulingPodGroup(t *testing.T, c *harness.Cluster, name string, minMember int) {
	t.Helper()
	body := fmt.Sprintf(`{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",
		"metadata":{"name":%q,"namespace":%q},"spec":{"minMember":%d}}`, name, c.Namespace, minMember)
	if err := c.Client.Discovery().RESTClient().Post().
		AbsPath("/apis/scheduling.x-k8s.io/v1alpha1/namespaces", c.Namespace, "podgroups").
		SetHeader("Content-Type", "application/json").Body([]byte(body)).Do(context.Background()).Error(); err != nil {
		t.Fatalf("create coscheduling PodGroup %s: %v", name, err)
	}
}
