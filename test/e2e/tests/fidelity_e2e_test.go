package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
	"topofit.dev/e2e/skip"
)

// The whole path, end to end: the real kube-apiserver and kube-scheduler (v1.36.3), `topofit serve`
// as the scheduler's extender, and four fake GPU nodes, each a process of its own (its own mount
// namespace: kubelet's socket paths are fixed) running kubelet's device manager and PodResources
// server (nodesim), upstream's stub device plugin as the NVIDIA plugin, and the real `topofit node`
// between them with --kubeconfig. topofit node publishes its node's topology and GPU UUIDs as
// deployed (its topology publishing, with the stand-in nvidia-smi printing a shared fixture and the
// stub's device IDs as UUIDs), gpu-health and gpu-actual. Each node plays kubelet's pod lifecycle
// against the API server (nodesim.APINode): it admits the pods bound to it as they arrive, sets them
// Running, and frees the GPUs of pods that end.
//
// Bursts: pods of mixed sizes (two-container pods, an init container whose GPUs its app container
// reuses), and rounds of equal sizes, created unbound for the topofit-scheduler profile; kube-scheduler
// and topofit choose node and GPUs and bind (gpu-plan). After each round half of the live pods end
// (Succeeded, or deleted). Asserted: every container gets exactly its plan (kubelet's recorded IDs,
// its NVIDIA_VISIBLE_DEVICES, PodResources List), no GPU is held twice, every pod is admitted,
// gpu-actual equals what kubelet holds, and topofit's model equals kubelet's truth.
//
// Deviations, timed from the moment on the node to the moment topofit's query API
// (GET /api/v1/nodes/NODE, gpuStates) equals kubelet's truth: (a) a foreign pod (spec.nodeName set
// directly), (b) a GPU going unhealthy (the stub's ListAndWatch) and healthy again, (c) kubelet
// choosing other GPUs than planned (a planned GPU goes unhealthy before the pod is admitted: kubelet
// does not offer it and fills from the free GPUs).
//
// Root only (unshare); skipped without a `topofit node` offering --kubeconfig and --nvidia-smi
// (topofitNodeBinary: $TOPOFIT_BINARY, else $TOPOFIT_NODE_BINARY).

const (
	e2eGPUs      = 8
	e2eMinPods   = 50
	e2eMinRounds = 4
	e2eReps      = 5                // repetitions of each deviation
	e2eTarget    = 5 * time.Second  // the target: a deviation reaches the model within it
	e2eConverge  = 15 * time.Second // past this, the model is taken not to follow at all (failure)
)

// The fake nodes: two NVLink (DGX-1) and two PCIe (L40S, two sockets).
var e2eNodes = []struct{ name, fixture string }{
	{"n1", "dgx1-v100-hybrid-cube-mesh.txt"},
	{"n2", "dgx1-v100-hybrid-cube-mesh.txt"},
	{"n3", "l40s-8-pcie-dual-socket.txt"},
	{"n4", "l40s-8-pcie-dual-socket.txt"},
}

func TestFidelityEndToEnd(t *testing.T) {
	nodeBin := topofitNodeBinary(t, "--kubeconfig", "--nvidia-smi")
	if os.Geteuid() != 0 {
		skip.OrFail(t, "needs root: each fake node runs kubelet's device manager in its own mount namespace (unshare)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		skip.OrFail(t, "needs unshare (util-linux)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	c := harness.Start(t, harness.Options{Extender: &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}})
	e := &e2eRun{t: t, c: c, ctx: ctx, foreign: map[string]bool{}}
	for _, n := range e2eNodes {
		// The Node as kubelet registers it: capacity, Ready; topology and UUIDs come from topofit node.
		c.CreateNodes(ctx, harness.GPUNode(n.name, e2eGPUs, ""))
	}
	for _, n := range e2eNodes {
		e.nodes = append(e.nodes, startFakeNode(t, c, nodeBin, n.name, n.fixture))
	}
	e.waitNodesPublished()
	t.Logf("cluster, %d fake nodes and topofit's view of them ready after %v", len(e.nodes), time.Since(start).Round(time.Millisecond))

	seed := time.Now().UnixNano()
	if s := os.Getenv("TOPOFIT_FIDELITY_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (TOPOFIT_FIDELITY_SEED replays it)", seed)
	e.rng = rand.New(rand.NewSource(seed))
	burstStart := time.Now()
	e.bursts()
	t.Logf("bursts over after %v", time.Since(burstStart).Round(time.Millisecond))
	if t.Failed() {
		return
	}
	devStart := time.Now()
	e.deviations()
	t.Logf("deviations over after %v", time.Since(devStart).Round(time.Millisecond))
}

type e2eRun struct {
	t       *testing.T
	c       *harness.Cluster
	ctx     context.Context
	rng     *rand.Rand
	nodes   []*fakeNode
	foreign map[string]bool // namespace/name of the pods topofit did not place
	seq     int
	live    []*e2ePod
}

type e2ePod struct {
	name, node string
	size       int
	plan       map[string][]string // container -> sorted UUIDs (topofit.io/gpu-plan)
}

// ---------------------------------------------------------------------------------------------
// Bursts.

func (e *e2eRun) newPodName(prefix string) string {
	e.seq++
	return fmt.Sprintf("%s%03d", prefix, e.seq)
}

// roundPods makes one round of pods filling `free` GPUs: even rounds mixed sizes and shapes, odd
// rounds one size (the pods topofit node must tell apart on a node).
func (e *e2eRun) roundPods(round, free int) []*corev1.Pod {
	ns := e.c.Namespace
	var out []*corev1.Pod
	if round%2 == 1 {
		s := []int{1, 2}[e.rng.Intn(2)]
		for left := free; left >= s; left -= s {
			out = append(out, harness.PodObject(ns, harness.GPUPod(e.newPodName("e"), s)))
		}
		return out
	}
	for left := free; left > 0; {
		var fit []int
		for _, s := range []int{1, 1, 2, 2, 4} {
			if s <= left {
				fit = append(fit, s)
			}
		}
		s := fit[e.rng.Intn(len(fit))]
		left -= s
		p := harness.PodObject(ns, harness.PodSpec{Name: e.newPodName("m")})
		switch shape := e.rng.Intn(6); {
		case shape == 0 && s >= 2: // two app containers
			a := 1 + e.rng.Intn(s-1)
			p.Spec.Containers = []corev1.Container{gpuContainer("main", a), gpuContainer("side", s-a)}
		case shape == 1: // an init container whose GPUs main reuses
			p.Spec.InitContainers = []corev1.Container{gpuContainer("setup", 1+e.rng.Intn(s))}
			p.Spec.Containers = []corev1.Container{gpuContainer("main", s)}
		default:
			p.Spec.Containers = []corev1.Container{gpuContainer("main", s)}
		}
		out = append(out, p)
	}
	return out
}

func podGPUs(p *corev1.Pod) int {
	n := 0
	for _, c := range p.Spec.Containers {
		q := c.Resources.Limits[harness.GPUResource]
		n += int(q.Value())
	}
	return n
}

func (e *e2eRun) bursts() {
	t := e.t
	ns := e.c.Namespace
	var containers, exact, placed, unplaced, ended int
	for round := 0; placed < e2eMinPods || round < e2eMinRounds; round++ {
		held := 0
		for _, p := range e.live {
			held += p.size
		}
		pods := e.roundPods(round, len(e.nodes)*e2eGPUs-held)
		for _, p := range pods {
			if _, err := e.c.Client.CoreV1().Pods(ns).Create(e.ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// Bound: every pod, or as many as found room (a set of free GPUs on one node): the others
		// stay Pending and are deleted once no pod has been bound for 3 s.
		wanted := map[string]bool{}
		for _, p := range pods {
			wanted[p.Name] = true
		}
		bound := map[string]*corev1.Pod{}
		for last := time.Now(); len(bound) < len(pods) && time.Since(last) < 3*time.Second; time.Sleep(100 * time.Millisecond) {
			list, err := e.c.Client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range list.Items {
				p := &list.Items[i]
				if _, done := bound[p.Name]; !done && wanted[p.Name] && p.Spec.NodeName != "" && p.Annotations[annotationPlan] != "" {
					bound[p.Name], last = p, time.Now()
				}
			}
		}
		var batch []*e2ePod
		for _, p := range pods {
			b, ok := bound[p.Name]
			if !ok {
				unplaced++
				if err := e.c.DeletePod(e.ctx, p.Name); err != nil {
					t.Fatal(err)
				}
				continue
			}
			var plan gpuAssignment
			if err := json.Unmarshal([]byte(b.Annotations[annotationPlan]), &plan); err != nil || plan.Node != b.Spec.NodeName {
				t.Fatalf("pod %s on %s: %s=%q (%v)", b.Name, b.Spec.NodeName, annotationPlan, b.Annotations[annotationPlan], err)
			}
			ep := &e2ePod{name: b.Name, node: b.Spec.NodeName, size: podGPUs(b), plan: map[string][]string{}}
			for c, ids := range plan.Containers {
				ep.plan[c] = sorted(ids)
			}
			batch = append(batch, ep)
		}
		placed += len(batch)
		// Admitted by their nodes.
		for _, n := range e.nodes {
			want := map[string]bool{}
			for _, p := range batch {
				if p.node == n.name {
					want[ns+"/"+p.name] = true
				}
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				missing := 0
				got := map[string]nodesim.Admission{}
				for _, a := range e.admissions(n) {
					got[a.Namespace+"/"+a.Name] = a
				}
				for k := range want {
					if _, ok := got[k]; !ok {
						missing++
					}
				}
				if missing == 0 {
					for k := range want {
						if a := got[k]; !a.Admit {
							t.Errorf("round %d: %s rejected on %s: %s: %s", round, k, n.name, a.Reason, a.Message)
						}
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("node %s: %d bound pods not admitted after 30 s", n.name, missing)
				}
			}
		}
		// Every container on its plan, three ways; no GPU twice.
		truths := map[string]*nodeTruth{}
		for _, n := range e.nodes {
			truths[n.name] = e.truth(n, true)
			owner := map[string]string{}
			for who, ids := range truths[n.name].Holdings {
				for _, id := range ids {
					if prev, ok := owner[id]; ok {
						t.Errorf("round %d: %s: %s held by %s and %s", round, n.name, id, prev, who)
					}
					owner[id] = who
				}
			}
		}
		for _, p := range batch {
			tr := truths[p.node]
			for c, want := range p.plan {
				containers++
				key := ns + "/" + p.name + "/" + c
				got := tr.Containers[key]
				listed, inList := tr.Holdings[key]
				ok := reflect.DeepEqual(got.IDs, want) && reflect.DeepEqual(got.Env, want) && (!inList || reflect.DeepEqual(listed, want))
				if ok {
					exact++
				} else {
					t.Errorf("%s on %s: got %v (env %v, PodResources %v), planned %v", key, p.node, got.IDs, got.Env, listed, want)
				}
			}
		}
		e.live = append(e.live, batch...)
		// gpu-actual on every running pod equals PodResources List; the model equals kubelet's truth.
		e.checkActuals()
		e.settle(fmt.Sprintf("round %d", round))
		// Half the live pods (at least one) end: Succeeded, or deleted.
		e.rng.Shuffle(len(e.live), func(i, j int) { e.live[i], e.live[j] = e.live[j], e.live[i] })
		k := (len(e.live) + 1) / 2
		for i, p := range e.live[:k] {
			e.end(p, i%2 == 0)
			ended++
		}
		e.live = e.live[k:]
		t.Logf("round %d: %d pods bound, %d found no room; %d live after %d ended", round, len(batch), len(pods)-len(batch), len(e.live), k)
	}
	e.settle("after the bursts")
	t.Logf("bursts: %d pods placed (%d found no room), %d GPU containers: %d got exactly their planned set (%.1f%%); %d pods ended",
		placed, unplaced, containers, exact, 100*float64(exact)/float64(max(containers, 1)), ended)
}

// end makes a running pod end: its containers exit (Succeeded) or it is deleted.
func (e *e2eRun) end(p *e2ePod, exit bool) {
	e.t.Helper()
	if exit {
		if err := e.node(p.node).call("POST", "/exit?namespace="+e.c.Namespace+"&name="+p.name, nil); err != nil {
			e.t.Fatal(err)
		}
		return
	}
	zero := int64(0)
	err := e.c.Client.CoreV1().Pods(e.c.Namespace).Delete(e.ctx, p.name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatal(err)
	}
}

// checkActuals waits until topofit.io/gpu-actual of every running pod equals what PodResources List
// says its containers hold, plus the GPUs kubelet allocated to its regular init containers (held
// for the pod's life, never listed; docs/kubelet-contracts.md). topofit node's reconciler writes it.
func (e *e2eRun) checkActuals() {
	e.t.Helper()
	ns := e.c.Namespace
	var last string
	for deadline := time.Now().Add(e2eConverge); ; time.Sleep(100 * time.Millisecond) {
		last = ""
		list, err := e.c.Client.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		want := map[string]map[string][]string{} // pod -> container -> IDs
		nodeOf := map[string]string{}
		for _, n := range e.nodes {
			tr := e.truth(n, true)
			for key, ids := range tr.Holdings {
				i, j := strings.Index(key, "/"), strings.LastIndex(key, "/")
				pod := key[i+1 : j]
				if want[pod] == nil {
					want[pod] = map[string][]string{}
				}
				want[pod][key[j+1:]] = ids
				nodeOf[pod] = n.name
			}
			for key, cd := range tr.Containers { // init containers: allocated, not listed
				i, j := strings.Index(key, "/"), strings.LastIndex(key, "/")
				pod, c := key[i+1:j], key[j+1:]
				if _, listed := want[pod][c]; want[pod] != nil && !listed && nodeOf[pod] == n.name {
					want[pod][c] = sorted(cd.IDs)
				}
			}
		}
		for _, p := range list.Items {
			w, running := want[p.Name]
			if !running {
				continue
			}
			var a gpuAssignment
			raw := p.Annotations[annotationActual]
			if err := json.Unmarshal([]byte(raw), &a); err != nil {
				last = fmt.Sprintf("%s: %s=%q", p.Name, annotationActual, raw)
				break
			}
			got := map[string][]string{}
			for c, ids := range a.Containers {
				got[c] = sorted(ids)
			}
			if a.Node != nodeOf[p.Name] || !reflect.DeepEqual(got, w) {
				last = fmt.Sprintf("%s: %s=%s, kubelet on %s: %v", p.Name, annotationActual, raw, nodeOf[p.Name], w)
				break
			}
		}
		if last == "" {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("gpu-actual != PodResources after %v: %s", e2eConverge, last)
		}
	}
}

// ---------------------------------------------------------------------------------------------
// Deviations.

func (e *e2eRun) deviations() {
	t := e.t
	ns := e.c.Namespace
	// The bursts' pods end; one resident 2-GPU pod per node stays, so that some GPUs going
	// unhealthy are held.
	for i, p := range e.live {
		e.end(p, i%2 == 0)
	}
	e.live = nil
	e.settle("before the deviations")
	residents := map[string]string{}
	for _, n := range e.nodes {
		name := "resident-" + n.name
		spec := harness.GPUPod(name, 2)
		spec.NodeName = n.name
		mustCreate(t, e.c, spec)
		residents[n.name] = name
	}
	for _, n := range e.nodes {
		e.waitAdmitted(n, residents[n.name])
	}
	e.settle("residents running")

	var foreign, unhealthy, healthy, moved []time.Duration
	for rep := 0; rep < e2eReps; rep++ {
		n := e.nodes[rep%len(e.nodes)]
		e.randomPhase()
		// (a) A foreign pod: bound by spec.nodeName, no plan; kubelet admits it at once.
		name := e.newPodName("foreign-")
		e.foreign[ns+"/"+name] = true
		f := harness.PodObject(ns, harness.PodSpec{Name: name, GPUs: 1 + rep%2, SchedulerName: "default-scheduler"})
		f.Spec.NodeName = n.name
		if _, err := e.c.Client.CoreV1().Pods(ns).Create(e.ctx, f, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		adm := e.waitAdmitted(n, name)
		lag := e.follow(n, e.truth(n, false), adm.At, "foreign pod "+name)
		foreign = append(foreign, lag)
		t.Logf("(a) %s: foreign pod %s (%d GPUs) admitted; topofit's model equal to kubelet's after %v", n.name, name, 1+rep%2, lag.Round(time.Millisecond))
		if err := e.c.DeletePod(e.ctx, name); err != nil {
			t.Fatal(err)
		}
		e.settle("foreign pod gone")

		// (b) A GPU goes unhealthy (even reps: a free one; odd: one the resident holds), then healthy.
		tr := e.truth(n, false)
		gpu := ""
		if rep%2 == 1 {
			gpu = tr.Holdings[ns+"/"+residents[n.name]+"/main"][0]
		} else {
			heldBy := map[string]bool{}
			for _, ids := range tr.Holdings {
				for _, id := range ids {
					heldBy[id] = true
				}
			}
			for _, id := range n.ids {
				if !heldBy[id] {
					gpu = id
				}
			}
		}
		e.randomPhase()
		at := e.setHealth(n, gpu, false)
		lag = e.follow(n, e.truth(n, false), at, "GPU "+gpu+" unhealthy")
		unhealthy = append(unhealthy, lag)
		t.Logf("(b) %s: %s unhealthy (held: %v); model equal after %v", n.name, gpu, rep%2 == 1, lag.Round(time.Millisecond))
		e.randomPhase()
		at = e.setHealth(n, gpu, true)
		lag = e.follow(n, e.truth(n, false), at, "GPU "+gpu+" healthy again")
		healthy = append(healthy, lag)
		t.Logf("(b) %s: %s healthy again; model equal after %v", n.name, gpu, lag.Round(time.Millisecond))

		// (c) Kubelet chooses other GPUs than planned: the node holds new pods back, a 2-GPU pod is
		// bound with its plan, one planned GPU goes unhealthy, then the node admits the pod: kubelet
		// does not offer that GPU, topofit node keeps the rest of the plan, kubelet fills the rest.
		if err := n.call("POST", "/pause?on=1", nil); err != nil {
			t.Fatal(err)
		}
		name = e.newPodName("moved-")
		spec := harness.GPUPod(name, 2)
		spec.NodeName = n.name
		mustCreate(t, e.c, spec)
		plan, _ := scheduledPlan(t, e.c, name)
		planned := sorted(plan.Containers["main"])
		lost := planned[0]
		e.setHealth(n, lost, false)
		e.settle("planned GPU unhealthy")
		e.randomPhase()
		if err := n.call("POST", "/pause?on=0", nil); err != nil {
			t.Fatal(err)
		}
		adm = e.waitAdmitted(n, name)
		tr = e.truth(n, true)
		got := tr.Holdings[ns+"/"+name+"/main"]
		if len(got) != 2 || contains(got, lost) || !subset(without(planned, []string{lost}), got) {
			t.Errorf("(c) %s: planned %v with %s unhealthy, kubelet gave %v: want the rest of the plan and one other GPU", name, planned, lost, got)
		}
		lag = e.follow(n, tr, adm.At, "pod "+name+" off its plan")
		moved = append(moved, lag)
		t.Logf("(c) %s: %s planned %v, %s unhealthy, kubelet gave %v; model equal after %v", n.name, name, planned, lost, got, lag.Round(time.Millisecond))
		if err := e.c.DeletePod(e.ctx, name); err != nil {
			t.Fatal(err)
		}
		e.setHealth(n, lost, true)
		e.settle("after (c)")
	}
	for _, n := range e.nodes {
		if err := e.c.DeletePod(e.ctx, residents[n.name]); err != nil {
			t.Fatal(err)
		}
	}
	e.settle("all pods gone")
	report := func(what string, d []time.Duration) {
		over := 0
		for _, x := range d {
			if x > e2eTarget {
				over++
			}
		}
		t.Logf("%s: %d samples, median %v, max %v, %d over the %v target; all: %v", what, len(d),
			percentile(d, 0.5).Round(time.Millisecond), percentile(d, 1).Round(time.Millisecond), over, e2eTarget, roundAll(d))
		if over > 0 {
			t.Errorf("%s: %d of %d deviations reached topofit's model later than %v", what, over, len(d), e2eTarget)
		}
	}
	report("(a) foreign pod admitted -> model", foreign)
	report("(b) GPU unhealthy -> model", unhealthy)
	report("(b) GPU healthy again -> model", healthy)
	report("(c) pod admitted off its plan -> model", moved)
}

// randomPhase waits 0-2 s (uniform, from the seeded generator) before a deviation: the deviations
// then fall at random points of topofit node's 2 s reconcile cycle instead of just after the
// reconcile the previous step waited for.
func (e *e2eRun) randomPhase() {
	time.Sleep(time.Duration(e.rng.Int63n(int64(2 * time.Second))))
}

func roundAll(d []time.Duration) []time.Duration {
	out := make([]time.Duration, len(d))
	for i, x := range d {
		out[i] = x.Round(time.Millisecond)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func (e *e2eRun) setHealth(n *fakeNode, id string, healthy bool) time.Time {
	e.t.Helper()
	h := "0"
	if healthy {
		h = "1"
	}
	var r struct {
		At time.Time `json:"at"`
	}
	if err := n.call("POST", "/health?id="+id+"&healthy="+h, &r); err != nil {
		e.t.Fatal(err)
	}
	return r.At
}

// waitAdmitted waits until node n has admitted the pod (rejection fails the test).
func (e *e2eRun) waitAdmitted(n *fakeNode, name string) nodesim.Admission {
	e.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, a := range e.admissions(n) {
			if a.Namespace == e.c.Namespace && a.Name == name {
				if !a.Admit {
					e.t.Fatalf("%s rejected on %s: %s: %s", name, n.name, a.Reason, a.Message)
				}
				return a
			}
		}
	}
	e.t.Fatalf("%s not admitted on %s after 30 s", name, n.name)
	return nodesim.Admission{}
}

// scheduledPlan waits for a pod to be bound with its plan.
func scheduledPlan(t *testing.T, c *harness.Cluster, name string) (*gpuAssignment, string) {
	t.Helper()
	p, err := c.WaitForPod(context.Background(), name, harness.DefaultWait, "bound with "+annotationPlan,
		func(p *corev1.Pod) bool { return p.Spec.NodeName != "" && p.Annotations[annotationPlan] != "" })
	if err != nil {
		t.Fatal(err)
	}
	var a gpuAssignment
	if err := json.Unmarshal([]byte(p.Annotations[annotationPlan]), &a); err != nil {
		t.Fatalf("pod %s: %s: %v", name, annotationPlan, err)
	}
	return &a, p.Spec.NodeName
}
