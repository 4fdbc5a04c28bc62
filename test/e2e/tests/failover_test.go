package tests

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"topofit.dev/e2e/harness"
)

// Failover of the deployed shape (manifests/base): two replicas, each kube-scheduler with leader
// election on the configuration's Lease plus its own `topofit serve --filter-keeps-best`, against one
// API server. Only the leader schedules, so only its topofit gets verbs; the standby's topofit keeps
// its model from the watch.

// failoverLE: kube-scheduler's defaults (leaseDuration 15 s, renewDeadline 10 s, retryPeriod 2 s, what
// manifests/base deploys) divided by about four, so a test takes seconds; the renew deadline keeps 3 s
// of room for a slow API server on a loaded machine. TOPOFIT_E2E_FAILOVER_LEASE=15s,10s,2s runs the
// tests with other timings (the deployed ones, for docs/failover.md).
var failoverLE = harness.LeaderElection{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second,
	RetryPeriod: 500 * time.Millisecond}

func leaderElection(t *testing.T) harness.LeaderElection {
	t.Helper()
	env := os.Getenv("TOPOFIT_E2E_FAILOVER_LEASE")
	if env == "" {
		return failoverLE
	}
	var d [3]time.Duration
	parts := strings.Split(env, ",")
	for i := range d {
		var err error
		if len(parts) != 3 {
			err = fmt.Errorf("want three durations")
		} else {
			d[i], err = time.ParseDuration(strings.TrimSpace(parts[i]))
		}
		if err != nil {
			t.Fatalf("TOPOFIT_E2E_FAILOVER_LEASE=%q (leaseDuration,renewDeadline,retryPeriod): %v", env, err)
		}
	}
	return harness.LeaderElection{LeaseDuration: d[0], RenewDeadline: d[1], RetryPeriod: d[2]}
}

// takeoverBound is the latest the standby may acquire the Lease after the leader dies. client-go
// polls every RetryPeriod x [1, 2.2] (JitterUntil, factor 1.2): the standby sees the leader's last
// renewal up to one poll late, counts LeaseDuration from then, and acquires at its first poll after,
// so the takeover is at most LeaseDuration + 2 x 2.2 x RetryPeriod, plus 2 s of slack for API
// latency on a loaded 2-core machine.
func takeoverBound(le harness.LeaderElection) time.Duration {
	return le.LeaseDuration + time.Duration(2*2.2*float64(le.RetryPeriod)) + 2*time.Second
}

type failoverCluster struct {
	c        *harness.Cluster
	le       harness.LeaderElection
	replicas []*harness.Replica
	ops      map[string]string // replica name -> its topofit's --ops-listen address (query API)
	lease    harness.LeaseRef
	nodes    int
	perNode  int
}

// startFailoverCluster: one API server, `nodes` 8-GPU HGX A100 nodes, two replicas "replica-a" and
// "replica-b" whose topofits both know every node.
func startFailoverCluster(t *testing.T, nodes int) *failoverCluster {
	t.Helper()
	bin := harness.TopofitBinary(t)
	ctx := context.Background()
	f := &failoverCluster{le: leaderElection(t), nodes: nodes, perNode: 8}
	f.c = harness.Start(t, harness.Options{NoScheduler: true})
	var specs []harness.NodeSpec
	for i := 0; i < nodes; i++ {
		specs = append(specs, harness.GPUNode(fmt.Sprintf("a100-%02d", i), f.perNode, "hgx-a100-8"))
	}
	f.c.CreateNodes(ctx, specs...)
	f.ops = map[string]string{}
	for _, name := range []string{"replica-a", "replica-b"} {
		// As manifests/base runs the sidecar: the verbs on the scheduler's address, the probes and the
		// query API on their own listener (--ops-listen).
		port, err := harness.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		ops := fmt.Sprintf("127.0.0.1:%d", port)
		ext := &harness.TopofitExtender{Binary: bin, Args: []string{"--ops-listen=" + ops, "--url-prefix=/scheduler"}}
		r, lease, err := f.c.StartReplica(ctx, name, ext, f.le, "")
		if err != nil {
			t.Fatal(err)
		}
		f.replicas = append(f.replicas, r)
		f.lease = lease
		f.ops[name] = ops
		waitModelNodes(t, ops, nodes)
	}
	return f
}

// waitModelNodes waits until the topofit at addr has every node in its model.
func waitModelNodes(t *testing.T, addr string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var body struct {
			Totals struct {
				Nodes int `json:"nodes"`
			} `json:"totals"`
		}
		if err := getJSON("http://"+addr+"/api/v1/nodes", &body); err == nil && body.Totals.Nodes >= want {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("topofit at %s never saw %d nodes", addr, want)
}

func (f *failoverCluster) leader(t *testing.T) (leader, standby *harness.Replica) {
	t.Helper()
	l, err := harness.WaitLeader(context.Background(), 30*time.Second, f.replicas...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.replicas {
		if r != l {
			standby = r
		}
	}
	if standby.IsLeader() {
		t.Fatalf("both %s and %s logged acquiring the lease", l.Name, standby.Name)
	}
	return l, standby
}

func (f *failoverCluster) holder(t *testing.T) string {
	t.Helper()
	l, err := f.c.GetLease(context.Background(), f.lease)
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// burstSizes: n pod sizes from {1, 1, 2, 4} (seeded). The callers keep the total at most the
// cluster's GPUs minus 3 per node, so at every moment some node has 4 free GPUs and no pod is left
// Pending for lack of room, whatever the order of binding.
func burstSizes(seed int64, n int) []int {
	rng := rand.New(rand.NewSource(seed))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = []int{1, 1, 2, 4}[rng.Intn(4)]
	}
	return sizes
}

// createBurst creates pods prefix-000.. with the given sizes from `workers` goroutines at once (faster
// than one scheduler binds them); the channel gets the first error or closes when all are created.
func createBurst(c *harness.Cluster, prefix string, sizes []int, workers int) <-chan error {
	done := make(chan error, workers)
	next := make(chan int)
	go func() {
		for i := range sizes {
			next <- i
		}
		close(next)
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if _, err := c.CreatePod(context.Background(), harness.GPUPod(fmt.Sprintf("%s-%03d", prefix, i), sizes[i])); err != nil {
					done <- err
					for range next {
					}
					return
				}
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	return done
}

// boundPods lists the namespace's pods and returns those bound to a node, by name.
func boundPods(t *testing.T, c *harness.Cluster) (bound map[string]corev1.Pod, total int) {
	t.Helper()
	pods, err := c.ListPods(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bound = map[string]corev1.Pod{}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound[p.Name] = p
		}
	}
	return bound, len(pods)
}

// waitAllBound waits until want pods exist and all are bound; returns them.
func waitAllBound(t *testing.T, c *harness.Cluster, want int, timeout time.Duration) map[string]corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		bound, total := boundPods(t, c)
		if total == want && len(bound) == want {
			return bound
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d pods bound after %v", len(bound), want, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// gpuRequest is the pod's nvidia.com/gpu limit.
func gpuRequest(p *corev1.Pod) int {
	n := 0
	for _, ctr := range p.Spec.Containers {
		if q, ok := ctr.Resources.Limits[harness.GPUResource]; ok {
			n += int(q.Value())
		}
	}
	return n
}

// holdings checks every bound pod's topofit.io/gpu-ids (as many distinct GPUs as it asks for, each
// below perNode, none held by another pod of the node) and returns node -> "namespace/name" -> GPUs.
func holdings(t *testing.T, bound map[string]corev1.Pod, perNode int) map[string]map[string][]int {
	t.Helper()
	out := map[string]map[string][]int{}
	owner := map[string]string{}
	for name, p := range bound {
		raw, ok := p.Annotations[harness.AnnotationGPUIDs]
		ids := parseGPUIDs(raw)
		if !ok || len(ids) != gpuRequest(&p) {
			t.Errorf("pod %s on %s: %s=%q, want %d GPUs", name, p.Spec.NodeName, harness.AnnotationGPUIDs, raw, gpuRequest(&p))
			continue
		}
		for i, id := range ids {
			if id < 0 || id >= perNode || (i > 0 && ids[i-1] == id) {
				t.Errorf("pod %s: bad GPU set %v on a %d-GPU node", name, ids, perNode)
			}
			key := fmt.Sprintf("%s/%d", p.Spec.NodeName, id)
			if other, dup := owner[key]; dup {
				t.Errorf("GPU %s given twice: to %s and %s", key, other, name)
			}
			owner[key] = name
		}
		if out[p.Spec.NodeName] == nil {
			out[p.Spec.NodeName] = map[string][]int{}
		}
		out[p.Spec.NodeName][p.Namespace+"/"+p.Name] = ids
	}
	return out
}

// modelDiff compares the model of the topofit at addr (GET /api/v1/ui/nodes) with want (node ->
// pod -> GPUs, from the pods' annotations): the same holders with the same GPUs, each a confirmed
// holding of known identity without conflict, and every other GPU free. "" when they agree.
func modelDiff(addr string, want map[string]map[string][]int, nodes, perNode int) string {
	var body struct {
		Nodes []struct {
			Name     string `json:"name"`
			FreeGpus []int  `json:"freeGpus"`
			Pods     []struct {
				Pod             string `json:"pod"`
				Gpus            []int  `json:"gpus"`
				Kind            string `json:"kind"`
				UnknownIdentity bool   `json:"unknownIdentity"`
				Conflict        string `json:"conflict"`
			} `json:"pods"`
		} `json:"nodes"`
	}
	if err := getJSON("http://"+addr+"/api/v1/ui/nodes", &body); err != nil {
		return err.Error()
	}
	if len(body.Nodes) != nodes {
		return fmt.Sprintf("model has %d nodes, want %d", len(body.Nodes), nodes)
	}
	var diffs []string
	for _, n := range body.Nodes {
		got := map[string][]int{}
		held := map[int]bool{}
		for _, p := range n.Pods {
			if len(p.Gpus) == 0 {
				continue // CPU-only holdings are not part of the GPU picture
			}
			if p.Kind != "bound" || p.UnknownIdentity || p.Conflict != "" {
				diffs = append(diffs, fmt.Sprintf("%s: %s is %s (unknownIdentity=%v, conflict=%q)", n.Name, p.Pod, p.Kind,
					p.UnknownIdentity, p.Conflict))
			}
			ids := append([]int(nil), p.Gpus...)
			sort.Ints(ids)
			got[p.Pod] = ids
			for _, id := range ids {
				held[id] = true
			}
		}
		w := want[n.Name]
		if w == nil {
			w = map[string][]int{}
		}
		if !reflect.DeepEqual(got, w) {
			diffs = append(diffs, fmt.Sprintf("%s: model %v, annotations %v", n.Name, got, w))
		}
		var free []int
		for id := 0; id < perNode; id++ {
			if !held[id] {
				free = append(free, id)
			}
		}
		gotFree := append([]int(nil), n.FreeGpus...)
		sort.Ints(gotFree)
		if len(free) != len(gotFree) || (len(free) > 0 && !reflect.DeepEqual(free, gotFree)) {
			diffs = append(diffs, fmt.Sprintf("%s: model free %v, want %v", n.Name, gotFree, free))
		}
	}
	return strings.Join(diffs, "\n")
}

// waitModelEquals polls modelDiff until it is empty (the watch may lag a moment) or fails the test.
func waitModelEquals(t *testing.T, addr string, want map[string]map[string][]int, nodes, perNode int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		d := modelDiff(addr, want, nodes, perNode)
		if d == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topofit %s: model differs from the pods' annotations:\n%s", addr, d)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bindLog: the pods topofit logged a successful bind decision for, from its log.
func bindLog(r *harness.Replica) map[string]bool {
	out := map[string]bool{}
	for _, l := range harness.GrepFile(r.Dir+"/extender.log", "verb=bind pod=") {
		if strings.Contains(l, " error=") {
			continue
		}
		rest := l[strings.Index(l, "verb=bind pod=")+len("verb=bind pod="):]
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			rest = rest[:i]
		}
		out[rest] = true
	}
	return out
}

// The leader's pair (kube-scheduler and its topofit) is SIGKILLed in the middle of a burst of GPU
// pods: the standby takes the Lease within the lease timing, its own topofit binds the rest, every
// pod is bound, no GPU is given twice, and the new leader's topofit model equals the annotations.
func TestFailoverLeaderPairKilled(t *testing.T) {
	const nodes, pods = 20, 48
	f := startFailoverCluster(t, nodes)
	c := f.c
	ctx := context.Background()
	leader, standby := f.leader(t)
	oldHolder := f.holder(t)
	t.Logf("leader %s (lease holder %s), standby %s", leader.Name, oldHolder, standby.Name)

	sizes := burstSizes(14, pods)
	total := 0
	for _, n := range sizes {
		total += n
	}
	if room := nodes*f.perNode - 3*nodes; total > room {
		t.Fatalf("burst of %d GPUs exceeds the room of %d that keeps every pod placeable", total, room)
	}
	created := createBurst(c, "burst", sizes, 4)

	// Kill once a quarter of the burst is bound, while the rest is still arriving.
	for {
		bound, _ := boundPods(t, c)
		if len(bound) >= pods/4 {
			break
		}
		if !leader.Scheduler.Running() || !standby.Scheduler.Running() {
			t.Fatal("a kube-scheduler exited before the kill")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := bindLog(standby); len(got) != 0 {
		t.Fatalf("the standby's topofit bound pods while it was not the leader's: %v", got)
	}
	killedAt := time.Now()
	if err := leader.Kill(); err != nil {
		t.Fatal(err)
	}
	boundAtKill, createdAtKill := boundPods(t, c)
	t.Logf("killed %s's kube-scheduler and topofit: %d of %d created pods bound (burst of %d)",
		leader.Name, len(boundAtKill), createdAtKill, pods)

	// The takeover: the Lease changes holder; its acquireTime is the standby's clock (this machine's).
	var takeover time.Duration
	for {
		l, err := c.GetLease(ctx, f.lease)
		if err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != oldHolder && l.Spec.AcquireTime != nil {
			takeover = l.Spec.AcquireTime.Time.Sub(killedAt)
			break
		}
		if time.Since(killedAt) > 3*takeoverBound(f.le) {
			t.Fatalf("no new lease holder %v after the kill", time.Since(killedAt))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !standby.IsLeader() {
		t.Fatalf("the lease changed holder but %s did not log acquiring it", standby.Name)
	}
	bound := takeoverBound(f.le)
	t.Logf("takeover: %s acquired the lease %.2f s after the kill (leaseDuration %v, retryPeriod %v, bound %v)",
		standby.Name, takeover.Seconds(), f.le.LeaseDuration, f.le.RetryPeriod, bound)
	if takeover > bound {
		t.Errorf("takeover took %v, more than %v", takeover, bound)
	}

	if err := <-created; err != nil {
		t.Fatal(err)
	}
	all := waitAllBound(t, c, pods, 90*time.Second)
	t.Logf("all %d pods bound %.2f s after the kill", pods, time.Since(killedAt).Seconds())

	// Every pod that was unbound when the old pair was dead was bound by the standby's own topofit
	// (it logs the decision a moment after the Binding is written: wait for the lines).
	var byStandby map[string]bool
	for deadline := time.Now().Add(10 * time.Second); ; {
		byStandby = bindLog(standby)
		var missing []string
		for name, p := range all {
			if _, before := boundAtKill[name]; !before && !byStandby[p.Namespace+"/"+name] {
				missing = append(missing, name)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(missing)
			t.Fatalf("pods bound after the kill without a bind logged by %s's topofit: %v", standby.Name, missing)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("%s's topofit bound %d pods", standby.Name, len(byStandby))

	want := holdings(t, all, f.perNode)
	waitModelEquals(t, f.ops[standby.Name], want, nodes, f.perNode)
}

// The leader's topofit alone dies (SIGKILL) while its kube-scheduler lives: the extender is not
// ignorable in the deployed configuration, so new pods stay Pending (FailedScheduling names the failed
// call) and the Lease stays where it is; topofit restarted on the same port rebuilds its model from
// the API server, the waiting pods are bound, no GPU is given twice, and its model equals the pods'
// annotations.
func TestFailoverExtenderRestart(t *testing.T) {
	const nodes, wave = 10, 12
	f := startFailoverCluster(t, nodes)
	c := f.c
	ctx := context.Background()
	leader, standby := f.leader(t)
	holder := f.holder(t)

	// The deployed configuration makes the GPU extender (the binder) non-ignorable: that is why pods wait.
	raw, err := os.ReadFile(leader.Scheduler.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Extenders []struct {
			Ignorable bool   `json:"ignorable"`
			BindVerb  string `json:"bindVerb"`
		} `json:"extenders"`
	}
	binders := 0
	err = yaml.Unmarshal(raw, &cfg)
	for _, e := range cfg.Extenders {
		if e.BindVerb != "" && !e.Ignorable {
			binders++
		}
	}
	if err != nil || binders != 1 {
		t.Fatalf("%s: want one binding extender, with ignorable: false (%v): %+v", leader.Scheduler.ConfigPath, err, cfg)
	}

	sizes := burstSizes(7, 2*wave)
	total := 0
	for _, n := range sizes {
		total += n
	}
	if room := nodes*f.perNode - 3*nodes; total > room {
		t.Fatalf("%d GPUs exceed the room of %d that keeps every pod placeable", total, room)
	}
	if err := <-createBurst(c, "before", sizes[:wave], 4); err != nil {
		t.Fatal(err)
	}
	waitAllBound(t, c, wave, 60*time.Second)

	if err := leader.StopExtender(true); err != nil {
		t.Fatal(err)
	}
	downAt := time.Now()
	if err := <-createBurst(c, "during", sizes[wave:], 4); err != nil {
		t.Fatal(err)
	}
	ev, err := c.WaitForFailedScheduling(ctx, "during-000", 30*time.Second, leader.ExtenderAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("FailedScheduling while topofit is down: %s", ev.Message)
	// Several scheduling attempts' worth of outage (the scheduler backs off 1 s, 2 s, 4 s...).
	if d := 6*time.Second - time.Since(downAt); d > 0 {
		time.Sleep(d)
	}
	if bound, _ := boundPods(t, c); len(bound) != wave {
		t.Fatalf("%d pods bound while the extender was down, want the %d bound before", len(bound)-wave, wave)
	}
	if h := f.holder(t); h != holder || standby.IsLeader() || !leader.Scheduler.Running() {
		t.Fatalf("the lease moved while only the extender was down: holder %s -> %s", holder, h)
	}

	restartedAt := time.Now()
	if err := leader.StartExtender(ctx); err != nil {
		t.Fatal(err)
	}
	all := waitAllBound(t, c, 2*wave, 90*time.Second)
	t.Logf("topofit down %.1f s; the %d waiting pods bound %.2f s after its restart",
		restartedAt.Sub(downAt).Seconds(), wave, time.Since(restartedAt).Seconds())
	want := holdings(t, all, f.perNode)
	waitModelEquals(t, f.ops[leader.Name], want, nodes, f.perNode)
	waitModelEquals(t, f.ops[standby.Name], want, nodes, f.perNode)
}
