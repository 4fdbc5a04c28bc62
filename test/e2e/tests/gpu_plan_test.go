package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"topofit.dev/e2e/harness"
)

// Per-container plans by UUID (topofit.io/gpu-plan, written by topofit's bind) and what the node
// side observes (topofit.io/gpu-actual, written here as the node side would): the model follows the
// observation within 5 s, keeps a terminating pod's GPUs until it is gone, and tells foreign pods
// apart. The contract of both annotations:
//
//	{"v":1,"node":"<node>","containers":{"<container>":["GPU-<uuid>",...]},"t":<unix seconds>}

const (
	annotationPlan   = "topofit.io/gpu-plan"
	annotationActual = "topofit.io/gpu-actual"
	annotationPCI    = "topofit.io/gpu-pci-bus-ids"
	annotationHealth = "topofit.io/gpu-health"
	// Set by topofit on a pending pod it asks kube-scheduler to try again.
	annotationRequeuedAt = "topofit.io/requeued-at"
	followWithin         = 5 * time.Second
)

type gpuAssignment struct {
	V          int                 `json:"v"`
	Node       string              `json:"node"`
	Containers map[string][]string `json:"containers"`
	T          int64               `json:"t"`
}

func uuidOf(node string, i int) string { return fmt.Sprintf("GPU-%s-%04d", node, i) }

// uuidNode is an 8-GPU DGX-1 node with the index -> UUID -> PCI map and a health report, as the node
// side publishes them.
func uuidNode(name string) harness.NodeSpec {
	n := harness.GPUNode(name, 8, "dgx1-v100")
	var uuids, pci []string
	for i := 0; i < 8; i++ {
		uuids = append(uuids, uuidOf(name, i))
		pci = append(pci, fmt.Sprintf("00000000:%02X:00.0", 0x10+i))
	}
	n.Annotations[annotationUUIDs] = strings.Join(uuids, ",")
	n.Annotations[annotationPCI] = strings.Join(pci, ",")
	n.Annotations[annotationHealth] = fmt.Sprintf(`{"v":1,"unhealthy":[],"t":%d}`, time.Now().Unix())
	return n
}

func uuidsOf(node string, ids []int) []string {
	var out []string
	for _, i := range ids {
		out = append(out, uuidOf(node, i))
	}
	sort.Strings(out)
	return out
}

func planOf(t *testing.T, c *harness.Cluster, name string) (*gpuAssignment, bool) {
	t.Helper()
	p, err := c.GetPod(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	text, ok := p.Annotations[annotationPlan]
	if !ok {
		return nil, false
	}
	var a gpuAssignment
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		t.Fatalf("pod %s: %s=%q does not parse: %v", name, annotationPlan, text, err)
	}
	return &a, true
}

func setActual(t *testing.T, c *harness.Cluster, pod, node string, containers map[string][]int) {
	t.Helper()
	a := gpuAssignment{V: 1, Node: node, Containers: map[string][]string{}, T: time.Now().Unix()}
	for name, ids := range containers {
		for _, i := range ids {
			a.Containers[name] = append(a.Containers[name], uuidOf(node, i))
		}
	}
	text, _ := json.Marshal(a)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotationActual: string(text)}}})
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Patch(context.Background(), pod, types.MergePatchType, patch,
		metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

type gpuState struct {
	Index       int    `json:"index"`
	UUID        string `json:"uuid"`
	PCI         string `json:"pciBusId"`
	State       string `json:"state"`
	Pod         string `json:"pod"`
	Container   string `json:"container"`
	Terminating bool   `json:"terminating"`
	Guessed     bool   `json:"guessed"`
}

func gpuStates(c *harness.Cluster, node string) ([]gpuState, error) {
	var body struct {
		GPUStates []gpuState `json:"gpuStates"`
	}
	err := getJSON("http://"+c.ExtenderAddr+"/api/v1/nodes/"+node, &body)
	return body.GPUStates, err
}

// waitStates polls topofit's view of node until check passes; returns how long it took.
func waitStates(t *testing.T, c *harness.Cluster, node string, within time.Duration, what string,
	check func([]gpuState) error) time.Duration {
	t.Helper()
	start := time.Now()
	var last error
	for time.Since(start) < within {
		states, err := gpuStates(c, node)
		if err == nil {
			if last = check(states); last == nil {
				return time.Since(start)
			}
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, within, last)
	return 0
}

// expect builds a check: GPU index -> "state pod[ container]" ("free" for free GPUs).
func expect(c *harness.Cluster, want map[int]string) func([]gpuState) error {
	return func(states []gpuState) error {
		for i, w := range want {
			if i >= len(states) {
				return fmt.Errorf("no GPU %d", i)
			}
			s := states[i]
			got := s.State
			if s.Pod != "" {
				got += " " + strings.TrimPrefix(s.Pod, c.Namespace+"/")
			}
			if !strings.HasPrefix(got, w) {
				return fmt.Errorf("GPU %d is %q, want %q", i, got, w)
			}
		}
		return nil
	}
}

func gpuContainer(name string, gpus int) corev1.Container {
	return corev1.Container{Name: name, Image: "topofit-e2e/pause", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits:   corev1.ResourceList{harness.GPUResource: *resource.NewQuantity(int64(gpus), resource.DecimalSI)}}}
}

func TestTopofitGPUPlanAndActual(t *testing.T) {
	ctx := context.Background()
	c, _ := startTopofit(t, uuidNode("u1"), harness.GPUNode("ix", 8, "pcie-8-dual-socket"))
	waitTopofitNodes(t, c, 2)

	pin := func(name string, gpus int, node string) {
		spec := harness.GPUPod(name, gpus)
		spec.NodeName = node
		mustCreate(t, c, spec)
	}
	pin("p1", 2, "u1")
	pin("p2", 3, "u1")
	// Two app containers (1 + 1) reusing an init container's 2 GPUs.
	mc := harness.PodObject(c.Namespace, harness.PodSpec{Name: "mc", NodeName: "u1"})
	mc.Spec.InitContainers = []corev1.Container{gpuContainer("warm", 2)}
	mc.Spec.Containers = []corev1.Container{gpuContainer("a", 1), gpuContainer("b", 1)}
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, mc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pin("p3", 2, "ix")

	ids := map[string][]int{}
	for _, p := range []struct {
		name string
		gpus int
	}{{"p1", 2}, {"p2", 3}, {"mc", 2}, {"p3", 2}} {
		_, ids[p.name] = scheduled(t, c, p.name, p.gpus, 8)
	}

	// Plans: per container, by UUID, naming the node; gpu-ids names the same GPUs.
	for _, name := range []string{"p1", "p2"} {
		plan, ok := planOf(t, c, name)
		if !ok {
			t.Fatalf("pod %s has no %s", name, annotationPlan)
		}
		if plan.V != 1 || plan.Node != "u1" || time.Since(time.Unix(plan.T, 0)) > 5*time.Minute {
			t.Errorf("pod %s plan %+v: want v 1, node u1, a recent t", name, plan)
		}
		if len(plan.Containers) != 1 || fmt.Sprint(sorted(plan.Containers["main"])) != fmt.Sprint(uuidsOf("u1", ids[name])) {
			t.Errorf("pod %s plan %v, want main: %v", name, plan.Containers, uuidsOf("u1", ids[name]))
		}
	}
	plan, ok := planOf(t, c, "mc")
	if !ok {
		t.Fatalf("pod mc has no %s", annotationPlan)
	}
	warm, a, b := plan.Containers["warm"], plan.Containers["a"], plan.Containers["b"]
	if len(plan.Containers) != 3 || len(warm) != 2 || len(a) != 1 || len(b) != 1 ||
		fmt.Sprint(sorted(warm)) != fmt.Sprint(sorted(append(append([]string{}, a...), b...))) ||
		fmt.Sprint(sorted(warm)) != fmt.Sprint(uuidsOf("u1", ids["mc"])) {
		t.Errorf("pod mc plan %v: want warm = a + b = gpu-ids %v", plan.Containers, ids["mc"])
	}
	t.Logf("plans: p1 %v, p2 %v, mc %v", ids["p1"], ids["p2"], plan.Containers)
	// The index-only node: gpu-ids, no plan.
	if _, ok := planOf(t, c, "p3"); ok {
		t.Errorf("pod p3 on a node without a UUID map has a %s", annotationPlan)
	}

	// The model: planned, with the container, UUID and PCI bus id of each GPU.
	held := map[int]bool{}
	want := map[int]string{}
	for _, name := range []string{"p1", "p2", "mc"} {
		for _, i := range ids[name] {
			want[i] = "planned " + name
			held[i] = true
		}
	}
	free := -1
	for i := 0; i < 8; i++ {
		if !held[i] {
			free = i
			want[i] = "free"
		}
	}
	waitStates(t, c, "u1", followWithin, "planned states", expect(c, want))
	states, _ := gpuStates(c, "u1")
	if states[0].UUID != uuidOf("u1", 0) || states[0].PCI != "00000000:10:00.0" {
		t.Errorf("GPU 0 is %+v: want its UUID and PCI bus id", states[0])
	}

	// The node side observes p1 as planned, and p2 on another set: p2's first planned GPU stayed
	// free and kubelet took the free one instead.
	setActual(t, c, "p1", "u1", map[string][]int{"main": ids["p1"]})
	moved := append([]int{free}, ids["p2"][1:]...)
	start := time.Now()
	setActual(t, c, "p2", "u1", map[string][]int{"main": moved})
	want = map[int]string{ids["p2"][0]: "free", free: "in-use p2"}
	for _, i := range ids["p1"] {
		want[i] = "in-use p1"
	}
	for _, i := range ids["p2"][1:] {
		want[i] = "in-use p2"
	}
	for _, i := range ids["mc"] {
		want[i] = "planned mc"
	}
	waitStates(t, c, "u1", followWithin, "the model following gpu-actual", expect(c, want))
	// How long the model takes to follow a changed gpu-actual, from before the patch is sent until the
	// query API shows it: p2 moves between its planned set and the other one, 20 times.
	lags := []time.Duration{time.Since(start)}
	for k := 0; k < 20; k++ {
		to := ids["p2"] // k even: back to the plan; odd: to the moved set (the last, k = 19).
		if k%2 == 1 {
			to = moved
		}
		start := time.Now()
		setActual(t, c, "p2", "u1", map[string][]int{"main": to})
		waitStates(t, c, "u1", followWithin, "the model following gpu-actual", func(s []gpuState) error {
			for _, i := range to {
				if s[i].State != "in-use" || s[i].Pod != c.Namespace+"/p2" {
					return fmt.Errorf("GPU %d is %+v", i, s[i])
				}
			}
			return nil
		})
		lags = append(lags, time.Since(start))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	t.Logf("the model followed gpu-actual (patch sent -> query API shows it), %d changes: median %v, p95 %v, max %v",
		len(lags), lags[len(lags)/2], lags[len(lags)*95/100], lags[len(lags)-1])
	// p2 ends on `moved`: its first planned GPU is free again.
	waitStates(t, c, "u1", followWithin, "p2 back on the moved set", expect(c, want))

	// A pod bound by someone else (spec.nodeName set directly): foreign, first a guess, then observed.
	f := harness.PodObject(c.Namespace, harness.PodSpec{Name: "f", GPUs: 1, SchedulerName: "default-scheduler"})
	f.Spec.NodeName = "u1"
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, f, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStates(t, c, "u1", followWithin, "a foreign pod", expect(c, map[int]string{ids["p2"][0]: "foreign f"}))
	setActual(t, c, "f", "u1", map[string][]int{"main": {ids["p2"][0]}})
	waitStates(t, c, "u1", followWithin, "an observed foreign pod", func(s []gpuState) error {
		if g := s[ids["p2"][0]]; g.State != "foreign" || g.Guessed || g.Container != "main" {
			return fmt.Errorf("GPU %d is %+v", ids["p2"][0], g)
		}
		return nil
	})

	// p1 is deleted gracefully: with no kubelet it stays terminating. Its GPUs stay held, and a new
	// 2-GPU pod for the (full) node waits; once p1 is gone the new pod gets them.
	grace := int64(30)
	if err := c.Client.CoreV1().Pods(c.Namespace).Delete(ctx, "p1", metav1.DeleteOptions{GracePeriodSeconds: &grace}); err != nil {
		t.Fatal(err)
	}
	waitStates(t, c, "u1", followWithin, "a terminating pod", func(s []gpuState) error {
		for _, i := range ids["p1"] {
			if g := s[i]; g.State != "in-use" || !g.Terminating {
				return fmt.Errorf("GPU %d is %+v, want in-use and terminating", i, g)
			}
		}
		return nil
	})
	pin("p4", 2, "u1")
	time.Sleep(3 * time.Second)
	if p, err := c.GetPod(ctx, "p4"); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("p4 bound to %q while p1 still terminates (err %v)", p.Spec.NodeName, err)
	}
	for _, i := range ids["p1"] {
		if s, _ := gpuStates(c, "u1"); s[i].Pod != c.Namespace+"/p1" {
			t.Fatalf("GPU %d left p1 while it terminates: %+v", i, s[i])
		}
	}
	mustDelete(t, c, "p1")
	_, got := scheduled(t, c, "p4", 2, 8)
	if fmt.Sprint(got) != fmt.Sprint(ids["p1"]) {
		t.Errorf("p4 got %v, want p1's freed GPUs %v", got, ids["p1"])
	}
	t.Logf("p4 took p1's GPUs %v after p1 was gone", got)
}
