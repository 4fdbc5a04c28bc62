package tests

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// The scenarios below run the real topofit (`topofit serve --kubeconfig K --listen ADDR`) as the
// extender of testdata/scheduler-config.yaml. They are skipped when $TOPOFIT_BINARY is unset.
//
// What they assume of topofit: it binds pods itself and records the chosen GPU indices in the pod
// annotation topofit.io/gpu-ids (a list of indices; see parseGPUIDs); it reads node topology from
// the annotation topofit.io/gpu-topology (a built-in profile name) or GFD labels; a pod annotated
// topofit.io/topology-policy: required only gets an NVLink-connected set; its filter reasons reach
// the pod's FailedScheduling event.

func startTopofit(t *testing.T, nodes ...harness.NodeSpec) (*harness.Cluster, *harness.TopofitExtender) {
	t.Helper()
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, harness.Options{Extender: ext})
	c.CreateNodes(context.Background(), nodes...)
	// Give topofit's informers a moment to see the nodes before the first pod.
	time.Sleep(500 * time.Millisecond)
	return c, ext
}

// scheduled waits for a pod to be bound and returns its node and GPU indices (checked for count,
// range and duplicates against the pod's request).
func scheduled(t *testing.T, c *harness.Cluster, name string, gpus, nodeGPUs int) (string, []int) {
	t.Helper()
	p, err := c.WaitForPod(context.Background(), name, harness.DefaultWait, "bound with "+harness.AnnotationGPUIDs,
		func(p *corev1.Pod) bool {
			return p.Spec.NodeName != "" && p.Annotations[harness.AnnotationGPUIDs] != ""
		})
	if err != nil {
		t.Fatal(err)
	}
	ids := parseGPUIDs(p.Annotations[harness.AnnotationGPUIDs])
	if len(ids) != gpus {
		t.Fatalf("pod %s: %s=%q has %d GPUs, want %d", name, harness.AnnotationGPUIDs,
			p.Annotations[harness.AnnotationGPUIDs], len(ids), gpus)
	}
	for i, id := range ids {
		if id < 0 || id >= nodeGPUs || (i > 0 && ids[i-1] == id) {
			t.Fatalf("pod %s: bad GPU set %v on a %d-GPU node", name, ids, nodeGPUs)
		}
	}
	return p.Spec.NodeName, ids
}

func mustCreate(t *testing.T, c *harness.Cluster, spec harness.PodSpec) {
	t.Helper()
	if _, err := c.CreatePod(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
}

func mustDelete(t *testing.T, c *harness.Cluster, name string) {
	t.Helper()
	if err := c.DeletePod(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// 1/2/4/8-GPU pods, each alone on an empty cluster of an NVLink node and a PCIe node, land on the
// NVLink node with a set of the best NVLink total; a GFD-labelled A100 node takes an 8-GPU pod whole;
// time-sliced and MIG nodes labelled as GFD labels them take pods on their physical GPUs (shared_gpus_test.go).
func TestTopofitOptimalPlacement(t *testing.T) {
	c, _ := startTopofit(t,
		harness.GPUNode("dgx1", 8, "dgx1-v100"),
		harness.GPUNode("pcie", 8, "pcie-8-dual-socket"),
	)
	m := nvlinks(t, "dgx1-v100")
	for _, n := range []int{1, 2, 4, 8} {
		name := fmt.Sprintf("gpus-%d", n)
		mustCreate(t, c, harness.GPUPod(name, n))
		node, ids := scheduled(t, c, name, n, 8)
		t.Logf("%d GPUs -> %s %v", n, node, ids)
		if n > 1 {
			if node != "dgx1" {
				t.Errorf("%d-GPU pod on %s, want dgx1 (NVLink beats PCIe)", n, node)
			} else if got, best := nvlinkSum(m, ids), bestNVLinkSum(m, n); got != best {
				t.Errorf("%d-GPU pod got %v with %d NVLinks, best set has %d", n, ids, got, best)
			}
		}
		mustDelete(t, c, name)
	}

	t.Run("GFD labels", func(t *testing.T) {
		if _, err := c.CreateNode(context.Background(), harness.GFDNode("gfd-a100", 8, "NVIDIA-A100-SXM4-80GB")); err != nil {
			t.Fatal(err)
		}
		// Fill the other nodes so only the GFD node has 8 free GPUs.
		fill := func(name, node string) {
			spec := harness.GPUPod(name, 7)
			spec.NodeName = node
			mustCreate(t, c, spec)
		}
		fill("fill-dgx1", "dgx1")
		fill("fill-pcie", "pcie")
		scheduled(t, c, "fill-dgx1", 7, 8)
		scheduled(t, c, "fill-pcie", 7, 8)
		mustCreate(t, c, harness.GPUPod("whole-a100", 8))
		if node, _ := scheduled(t, c, "whole-a100", 8, 8); node != "gfd-a100" {
			t.Errorf("8-GPU pod on %s, want gfd-a100", node)
		}
	})

	t.Run("shared GPUs", func(t *testing.T) { testSharedGPUs(t, c) })
}

// 200 pods (40 with -short) of 1, 2 and 4 GPUs with deletions between: no GPU is ever given to two live pods.
func TestTopofitNoDoubleAllocation(t *testing.T) {
	const nodes, perNode = 4, 8
	var specs []harness.NodeSpec
	for i := 0; i < nodes; i++ {
		specs = append(specs, harness.GPUNode(fmt.Sprintf("a100-%d", i), perNode, "hgx-a100-8"))
	}
	c, _ := startTopofit(t, specs...)
	ctx := context.Background()
	rng := rand.New(rand.NewSource(42))
	type alloc struct {
		node string
		ids  []int
	}
	live := map[string]alloc{}
	used := map[string]int{} // node/gpu -> count of live pods holding it
	free := map[string]int{}
	for _, s := range specs {
		free[s.Name] = perNode
	}
	fits := func(size int) bool {
		for _, f := range free {
			if f >= size {
				return true
			}
		}
		return false
	}
	total := 200
	if testing.Short() {
		total = 40
	}
	for i := 0; i < total; i++ {
		size := []int{1, 1, 2, 2, 4}[rng.Intn(5)]
		// Delete random live pods: sometimes, and until some node has room for the next pod (the
		// scheduler counts GPUs per node, so a pod that fits nowhere would just stay Pending).
		for len(live) > 0 && (!fits(size) || rng.Intn(4) == 0) {
			for name, a := range live {
				mustDelete(t, c, name)
				for _, id := range a.ids {
					used[fmt.Sprintf("%s/%d", a.node, id)]--
				}
				free[a.node] += len(a.ids)
				delete(live, name)
				break
			}
		}
		name := fmt.Sprintf("p-%03d", i)
		mustCreate(t, c, harness.GPUPod(name, size))
		node, ids := scheduled(t, c, name, size, perNode)
		for _, id := range ids {
			k := fmt.Sprintf("%s/%d", node, id)
			if used[k] > 0 {
				t.Fatalf("pod %s got %s, already held by a live pod (live: %v)", name, k, live)
			}
			used[k]++
		}
		live[name] = alloc{node, ids}
		free[node] -= size
	}
	// Cross-check with the apiserver's view.
	pods, err := c.ListPods(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, p := range pods {
		for _, id := range parseGPUIDs(p.Annotations[harness.AnnotationGPUIDs]) {
			k := fmt.Sprintf("%s/%d", p.Spec.NodeName, id)
			if other, dup := seen[k]; dup {
				t.Errorf("%s held by %s and %s", k, other, p.Name)
			}
			seen[k] = p.Name
		}
	}
}

// A pod turned away for want of free GPUs on a node kube-scheduler saw room on (here 4 of the node's 8
// GPUs are reported unhealthy, which kube-scheduler does not know) is asked to be tried again, with
// topofit.io/requeued-at, once topofit sees GPUs freed there; then it runs. (The race this is for, a
// pod's end reaching kube-scheduler before topofit, cannot be staged here; the requeue path is the
// same.)
func TestTopofitRequeuesWhenGPUsFree(t *testing.T) {
	node := uuidNode("dgx")
	var bad []string
	for i := 4; i < 8; i++ {
		bad = append(bad, fmt.Sprintf("%q", uuidOf("dgx", i)))
	}
	node.Annotations[annotationHealth] = fmt.Sprintf(`{"v":1,"unhealthy":[%s],"t":%d}`, strings.Join(bad, ","), time.Now().Unix())
	c, _ := startTopofit(t, node)
	ctx := context.Background()
	mustCreate(t, c, harness.GPUPod("first", 4))
	if _, ids := scheduled(t, c, "first", 4, 8); ids[3] > 3 {
		t.Fatalf("first got %v, which includes an unhealthy GPU", ids)
	}
	mustCreate(t, c, harness.GPUPod("waits", 4))
	ev, err := c.WaitForFailedScheduling(ctx, "waits", harness.DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ev.Message, "4 GPUs requested, 0 free") {
		t.Errorf("FailedScheduling does not say why: %q", ev.Message)
	}
	mustDelete(t, c, "first")
	p, err := c.WaitForPod(ctx, "waits", harness.DefaultWait, "requeued by topofit and bound",
		func(p *corev1.Pod) bool { return p.Annotations[annotationRequeuedAt] != "" && p.Spec.NodeName != "" })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := time.Parse(time.RFC3339, p.Annotations[annotationRequeuedAt]); err != nil {
		t.Errorf("%s=%q: %v", annotationRequeuedAt, p.Annotations[annotationRequeuedAt], err)
	}
}

// A pod that fits nowhere stays Pending, with a FailedScheduling event carrying topofit's reason.
func TestTopofitUnschedulableReason(t *testing.T) {
	c, _ := startTopofit(t, harness.GPUNode("pcie", 8, "pcie-8-dual-socket"))
	spec := harness.GPUPod("needs-nvlink", 2)
	spec.Annotations = map[string]string{harness.AnnotationPolicy: "required"}
	mustCreate(t, c, spec)
	ev, err := c.WaitForFailedScheduling(context.Background(), "needs-nvlink", 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	msg := strings.ToLower(ev.Message)
	if !strings.Contains(msg, "nvlink") && !strings.Contains(msg, "topolog") {
		t.Errorf("FailedScheduling does not carry topofit's reason: %q", ev.Message)
	}
	t.Logf("FailedScheduling: %s", ev.Message)
}

// A `topology-policy: required` pod waits until an NVLink-connected set exists, then gets one.
func TestTopofitRequiredPolicyWaits(t *testing.T) {
	c, _ := startTopofit(t, harness.GPUNode("pcie", 8, "pcie-8-dual-socket"))
	spec := harness.GPUPod("required-4", 4)
	spec.Annotations = map[string]string{harness.AnnotationPolicy: "required"}
	mustCreate(t, c, spec)
	if _, err := c.WaitForFailedScheduling(context.Background(), "required-4", 60*time.Second); err != nil {
		t.Fatal(err)
	}
	// Add a DGX-1: its quads 0-3 and 4-7 are NVLink-connected, so now the pod fits.
	c.CreateNodes(context.Background(), harness.GPUNode("dgx1", 8, "dgx1-v100"))
	node, ids := scheduled(t, c, "required-4", 4, 8)
	if node != "dgx1" || !nvlinkConnected(nvlinks(t, "dgx1-v100"), ids) {
		t.Errorf("required pod got %s %v, want an NVLink-connected set on dgx1", node, ids)
	}
}

// topofit killed mid-run and restarted recovers its allocations from the pods' annotations.
func TestTopofitRestartRecovers(t *testing.T) {
	c, ext := startTopofit(t, harness.GPUNode("a100-0", 8, "hgx-a100-8"), harness.GPUNode("a100-1", 8, "hgx-a100-8"))
	ctx := context.Background()
	held := map[string]string{}
	hold := func(name string, n int) {
		node, ids := scheduled(t, c, name, n, 8)
		for _, id := range ids {
			k := fmt.Sprintf("%s/%d", node, id)
			if other, dup := held[k]; dup {
				t.Fatalf("%s: %s already held by %s", name, k, other)
			}
			held[k] = name
		}
	}
	for i, n := range []int{2, 1, 4, 1} {
		name := fmt.Sprintf("before-%d", i)
		mustCreate(t, c, harness.GPUPod(name, n))
		hold(name, n)
	}
	if err := ext.Stop(true); err != nil {
		t.Fatal(err)
	}
	// A pod created while topofit is down waits (the scheduler's extender calls fail).
	mustCreate(t, c, harness.GPUPod("during-outage", 2))
	time.Sleep(3 * time.Second)
	if p, err := c.GetPod(ctx, "during-outage"); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("pod scheduled while topofit was down: %v %v", p.Spec.NodeName, err)
	}
	if err := ext.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	hold("during-outage", 2)
	for i, n := range []int{2, 2} { // 16 - 8 - 2 = 6 GPUs left: these fit only without double counting
		name := fmt.Sprintf("after-%d", i)
		mustCreate(t, c, harness.GPUPod(name, n))
		hold(name, n)
	}
}

// A watch broken by an apiserver restart recovers: deletions made after it are seen by topofit.
func TestTopofitWatchRecoversAfterAPIServerRestart(t *testing.T) {
	c, _ := startTopofit(t, harness.GPUNode("a100", 8, "hgx-a100-8"))
	ctx := context.Background()
	for i := 0; i < 8; i++ {
		mustCreate(t, c, harness.GPUPod(fmt.Sprintf("one-%d", i), 1))
	}
	owner := map[int]string{}
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("one-%d", i)
		_, ids := scheduled(t, c, name, 1, 8)
		owner[ids[0]] = name
	}
	if err := c.RestartAPIServer(ctx, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	var freed []int
	for id := 0; id < 4; id++ {
		mustDelete(t, c, owner[id])
		freed = append(freed, id)
	}
	mustCreate(t, c, harness.GPUPod("four", 4))
	_, ids := scheduled(t, c, "four", 4, 8)
	for _, id := range ids {
		if id > 3 {
			t.Errorf("4-GPU pod got %v; only %v were freed", ids, freed)
		}
	}
}

// TestTopofitBindPlacement: `kubectl describe pod` answers where and why - the Binding topofit creates
// sets topofit.io/placement on the pod (its GPUs, their links, the predicted bandwidth and the node's
// score parts), and a routine bind writes no second object (bindEvents: notable, docs/throughput.md).
func TestTopofitBindPlacement(t *testing.T) {
	c, _ := startTopofit(t, harness.GPUNode("dgx1", 8, "dgx1-v100"))
	mustCreate(t, c, harness.GPUPod("described", 4))
	node, ids := scheduled(t, c, "described", 4, 8)
	want := fmt.Sprintf("GPUs %s on %s over NV", joinInts(ids), node)
	pod, err := c.Client.CoreV1().Pods(c.Namespace).Get(context.Background(), "described", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	placed := pod.Annotations["topofit.io/placement"]
	t.Logf("topofit.io/placement: %s", placed)
	if !strings.HasPrefix(placed, want) || !strings.Contains(placed, "GB/s predicted ring all-reduce; node scores: ") {
		t.Fatalf("topofit.io/placement %q, want it to start %q and name the bandwidth and scores", placed, want)
	}
	// kube-scheduler's Scheduled event comes after the bind; by then topofit would have queued its own.
	deadline := time.Now().Add(harness.DefaultWait)
	for scheduledSeen := false; !scheduledSeen; time.Sleep(200 * time.Millisecond) {
		events, err := c.PodEvents(context.Background(), "described")
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Reason == "GPUsAssigned" {
				t.Errorf("a routine bind wrote a GPUsAssigned event (bindEvents: notable): %s", e.Message)
			}
			scheduledSeen = scheduledSeen || e.Reason == "Scheduled"
		}
		if time.Now().After(deadline) {
			t.Fatalf("no Scheduled event on the pod after %v; events: %+v", harness.DefaultWait, events)
		}
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// TestTopofitPreemptionByPriorityClass: a pod of a higher PriorityClass takes the GPUs of lower ones.
// kube-scheduler's preemption asks topofit (the preempt verb) which victims free a set for it, deletes
// them, and the pod binds to the GPUs they held - with priorities coming from priorityClassName alone,
// through the Priority admission plugin, as in a cluster.
func TestTopofitPreemptionByPriorityClass(t *testing.T) {
	c, _ := startTopofit(t, harness.GPUNode("dgx1", 8, "dgx1-v100"))
	ctx := context.Background()
	for name, value := range map[string]int32{"e2e-low": 10, "e2e-high": 1000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"low-a", "low-b"} {
		spec := harness.GPUPod(name, 4)
		spec.PriorityClassName = "e2e-low"
		mustCreate(t, c, spec)
		scheduled(t, c, name, 4, 8)
	}
	if p, err := c.GetPod(ctx, "low-a"); err != nil || p.Spec.Priority == nil || *p.Spec.Priority != 10 {
		t.Fatalf("low-a: priority %v (%v), want 10 from its PriorityClass", p.Spec.Priority, err)
	}
	urgent := harness.GPUPod("urgent", 8)
	urgent.PriorityClassName = "e2e-high"
	mustCreate(t, c, urgent)
	node, ids := scheduled(t, c, "urgent", 8, 8)
	if node != "dgx1" || len(ids) != 8 {
		t.Fatalf("urgent on %s with %v, want all 8 GPUs of dgx1", node, ids)
	}
	for _, name := range []string{"low-a", "low-b"} {
		if p, err := c.GetPod(ctx, name); err == nil && p.DeletionTimestamp == nil {
			t.Errorf("%s survived: %s", name, p.Spec.NodeName)
		}
	}
}

// TestTopofitPagedFirstList: topofit lists the real kube-apiserver in pages (`--kube-api-list-limit 2`:
// 5 nodes and 5 pods take 3 pages each, so the server hands out continue tokens and topofit must follow
// them). After a restart its model, rebuilt from those pages alone, knows every node and every held GPU:
// 5 more 4-GPU pods fill exactly the 20 GPUs left, none given twice.
func TestTopofitPagedFirstList(t *testing.T) {
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t), Args: []string{"--kube-api-list-limit", "2"}}
	c := harness.Start(t, harness.Options{Extender: ext})
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		c.CreateNodes(ctx, harness.GPUNode(fmt.Sprintf("a100-%d", i), 8, "hgx-a100-8"))
	}
	time.Sleep(500 * time.Millisecond)
	held := map[string]string{}
	hold := func(name string) {
		node, ids := scheduled(t, c, name, 4, 8)
		for _, id := range ids {
			k := fmt.Sprintf("%s/%d", node, id)
			if other, dup := held[k]; dup {
				t.Fatalf("%s: %s already held by %s", name, k, other)
			}
			held[k] = name
		}
	}
	for i := 0; i < 5; i++ {
		mustCreate(t, c, harness.GPUPod(fmt.Sprintf("before-%d", i), 4))
		hold(fmt.Sprintf("before-%d", i))
	}
	if err := ext.Stop(true); err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		mustCreate(t, c, harness.GPUPod(fmt.Sprintf("after-%d", i), 4))
		hold(fmt.Sprintf("after-%d", i))
	}
	if len(held) != 40 {
		t.Fatalf("%d of 40 GPUs held", len(held))
	}
}
