package tests

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
	"topofit.dev/e2e/skip"
)

// `topofit node` between upstream's device manager and upstream's stub plugin (nodesim): the stub
// registers to topofit's registrar, topofit registers to kubelet.sock as nvidia.com/gpu, and kubelet
// (the v1.36.3 device manager, admitting as HandlePodAdditions does) asks topofit for its preference.
// The plans reach topofit node through --pods-file (a PodList with topofit.io/gpu-plan on each pod).
// The backend's own preference is the lexicographically first free GPUs and every plan is a random
// set, so a container that gets its plan got it from topofit.
//
// Bursts: 50 pods or more, in rounds that fill the node's free GPUs; even rounds mix sizes (1, 2, 4, 8;
// two-container pods; an init container whose GPUs its app container reuses), odd rounds are pods of
// one size; creation order is a random permutation of plan order, and kubelet gets the pods in
// deliveries of random size in a random (bind) order, each sorted by creation time as kubelet does. Some
// live pods terminate after every round (they stay in the file as Succeeded). Midway: a kubelet
// restart (sockets wiped, checkpoint kept), then a restart of the backend (its streams break, it
// registers to topofit node again), then a restart of topofit node.
// Asserts: every container gets exactly its planned set (kubelet's IDs, the container's env, PodResources
// List), no GPU is held by two containers, and every pod is admitted after each restart.
// Restart windows (TestFidelityTopofitNode only): a pod asking one GPU, without a plan, is admitted
// alone inside each window, and kubelet's verdict must be the one docs/node.md ("Restart windows")
// states: right after the kubelet restart, rejected with UnexpectedAdmissionError "no healthy devices
// present" unless topofit node is back already; while the backend is down (2 s, a new process after),
// admitted once it is back; while topofit node is stopped, rejected the same way. Its /readyz
// (--ops-listen) is ready once registered, not ready (backend_connected) while the backend is down,
// and ready again after each restart.
// The binary: topofitNodeBinary; skipped while neither offers the flags used here.

const planAnnotation = "topofit.io/gpu-plan"

var topofitNodeFlags = []string{"--node-name", "--device-plugin-dir", "--registrar-socket", "--pod-resources-socket"}

// topofitNodeBinary is the `topofit node` to run: $TOPOFIT_BINARY, the shipped one, when its `node
// --help` offers the flags used here and every flag in want; else $TOPOFIT_NODE_BINARY, its test
// build (topofit-node-testing, with --pods-file and --fake-backend; CTest sets it), when that one
// does. The test skips otherwise.
func topofitNodeBinary(t *testing.T, want ...string) string {
	t.Helper()
	var why []string
	for _, env := range []string{"TOPOFIT_BINARY", "TOPOFIT_NODE_BINARY"} {
		bin := os.Getenv(env)
		if bin == "" {
			why = append(why, env+" is unset")
			continue
		}
		out, err := exec.Command(bin, "node", "--help").CombinedOutput()
		if err != nil {
			why = append(why, fmt.Sprintf("`%s node --help` failed (%v): %s", bin, err, firstLine(out)))
			continue
		}
		missing := ""
		for _, f := range append(append([]string(nil), topofitNodeFlags...), want...) {
			if !strings.Contains(string(out), f) {
				missing = f
				break
			}
		}
		if missing == "" {
			return bin
		}
		why = append(why, fmt.Sprintf("`%s node --help` lacks %s", bin, missing))
	}
	skip.OrFail(t, fmt.Sprintf("no topofit node with the flags used here: %s", strings.Join(why, "; ")))
	return ""
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1)+0.5)]
}

func TestFidelityTopofitNode(t *testing.T) {
	bin := topofitNodeBinary(t, "--pods-file", "--ops-listen")
	if !nodesim.Hermetic(t) {
		return
	}
	st := runFidelityBursts(t, bin, burstOptions{strict: true, windows: true})
	if st.exact != st.containers {
		t.Errorf("%d of %d containers did not get their plan", st.containers-st.exact, st.containers)
	}
	if st.doubleHeld != 0 || st.rejected != 0 {
		t.Errorf("%d GPUs held by two containers, %d pods rejected", st.doubleHeld, st.rejected)
	}
}

// The bursts with foreign pods: even rounds now and then leave GPUs out of every plan and first
// admit a pod with no plan of exactly that size, while the round's planned pods are pending (some of
// the same size; every even round has one). Topofit must neither give it a pending plan (the one candidate of its size is not
// the pod kubelet is admitting: PodResources Get says so) nor let the backend pick planned GPUs
// (offer only the unplanned ones, which are exactly enough), so it gets those, and every planned
// container still gets its plan.
func TestFidelityTopofitNodeForeignPods(t *testing.T) {
	bin := topofitNodeBinary(t, "--pods-file")
	if !nodesim.Hermetic(t) {
		return
	}
	st := runFidelityBursts(t, bin, burstOptions{strict: true, foreign: true})
	if st.exact != st.containers {
		t.Errorf("%d of %d containers did not get their plan", st.containers-st.exact, st.containers)
	}
	if st.doubleHeld != 0 || st.rejected != 0 {
		t.Errorf("%d GPUs held by two containers, %d pods rejected", st.doubleHeld, st.rejected)
	}
	if st.foreign == 0 || st.foreignOff != st.foreign {
		t.Errorf("%d of %d foreign pods kept off the pending plans", st.foreignOff, st.foreign)
	}
}

// The bursts with the plans from a real kube-apiserver: topofit node watches the pods bound to its
// node (--kubeconfig) instead of reading a file; the pods are created with their plan as topofit's
// bind leaves them, and deleted when they terminate.
func TestFidelityTopofitNodeAPIServer(t *testing.T) {
	bin := topofitNodeBinary(t, "--kubeconfig")
	if !nodesim.Hermetic(t) {
		return
	}
	st := runFidelityBursts(t, bin, burstOptions{strict: true, api: true})
	if st.exact != st.containers {
		t.Errorf("%d of %d containers did not get their plan", st.containers-st.exact, st.containers)
	}
	if st.doubleHeld != 0 || st.rejected != 0 {
		t.Errorf("%d GPUs held by two containers, %d pods rejected", st.doubleHeld, st.rejected)
	}
}

// The scenarios catch a wrong matcher: topofit node without PodResources (--pod-resources-socket "",
// so no Get narrowing) can only take the earliest created of the candidates of equal size, which
// kubelet need not be admitting, and the scenario must see containers off their plan; kubelet still
// never gives a GPU twice.
func TestFidelityTopofitNodeCatchesSwaps(t *testing.T) {
	bin := topofitNodeBinary(t, "--pods-file")
	if !nodesim.Hermetic(t) {
		return
	}
	st := runFidelityBursts(t, bin, burstOptions{noGet: true})
	if st.exact == st.containers {
		t.Errorf("without Get narrowing all %d containers still got their plan: the scenario does not tell a swap", st.containers)
	}
	if st.doubleHeld != 0 {
		t.Errorf("%d GPUs held by two containers", st.doubleHeld)
	}
}

type burstStats struct {
	containers, exact, doubleHeld, rejected int
	foreign, foreignOff                     int // foreign containers; those kept off pending plans
}

type burstOptions struct {
	noGet   bool // topofit node without PodResources (--pod-resources-socket ""): no Get narrowing
	strict  bool // a container off its plan is an error (else logged and counted)
	foreign bool // add the foreign pods
	api     bool // plans through a real kube-apiserver (--kubeconfig) instead of --pods-file
	windows bool // admit a probe pod inside each restart window and check kubelet's verdict
}

// runFidelityBursts runs the bursts against the topofit node binary bin and counts.
func runFidelityBursts(t *testing.T, bin string, o burstOptions) burstStats {
	var st burstStats
	foreign := o.foreign
	report := t.Logf
	if o.strict {
		report = t.Errorf
	}
	const node = "n1"
	const gpus = 8
	const minPods = 50
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	dir := harness.ArtifactsDir(t)
	var plans planSource
	if o.api {
		plans = &apiPlans{c: harness.Start(t, harness.Options{NoScheduler: true}), node: node}
	} else {
		plans = &filePlans{path: filepath.Join(dir, "pods.json"), node: node}
	}
	if err := plans.publish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	podResources := nodesim.PodResourcesSocket
	if o.noGet {
		podResources = ""
	}
	args := append([]string{"--pod-resources-socket", podResources}, plans.args()...)
	if o.windows {
		args = append(args, "--ops-listen", "127.0.0.1:0")
	}
	rig := startNodeRig(ctx, t, bin, node, gpus, dir, args...)
	k, topofit, backend, registrar, ids := rig.k, rig.topofit, rig.backend, rig.registrar, rig.ids
	pr, err := nodesim.DialPodResources()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if o.windows {
		waitReadyz(t, topofit.LogPath, true, "", "registered to the device manager")
	}

	seed := time.Now().UnixNano()
	if s := os.Getenv("TOPOFIT_FIDELITY_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (TOPOFIT_FIDELITY_SEED replays it)", seed)
	rng := rand.New(rand.NewSource(seed))
	t0 := time.Now().Add(-24 * time.Hour)
	var all []*plannedPod
	seq := 0
	var admitTimes []time.Duration
	restartAt, backendRestartAt, nodeRestartAt := 6, 9, 12
	for round := 0; seq < minPods || round <= nodeRestartAt; round++ {
		switch round {
		case restartAt:
			start := time.Now()
			if err := k.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			started := time.Now() // the new device manager serves: the window is open
			if o.windows {
				probeWindow(t, k, "window-kubelet", node, start, false)
			}
			if err := k.WaitForDevices(ctx, nodesim.GPUResource, gpus); err != nil {
				t.Fatalf("after a kubelet restart: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
			}
			t.Logf("kubelet restart (sockets wiped): %d healthy GPUs again after %v (%v after the new device manager started)",
				gpus, time.Since(start).Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
			if o.windows {
				waitReadyz(t, topofit.LogPath, true, "", "after the kubelet restart")
			}
		case backendRestartAt:
			start := time.Now()
			if err := backend.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			// Kubelet may or may not see topofit's stream break; 8 healthy GPUs for 1 s in a row say
			// the restart is over either way.
			since, err := k.WaitForStableDevices(ctx, nodesim.GPUResource, gpus, time.Second)
			if err != nil {
				t.Fatalf("after a backend restart: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
			}
			t.Logf("backend restart (re-registered to topofit node): %d healthy GPUs from %v on", gpus, since.Sub(start).Round(time.Millisecond))
			if o.windows {
				// The backend as a process that exits and comes back 2 s later; a pod admitted meanwhile
				// waits in Allocate for it (topofit keeps the GPUs healthy for 10 s without it).
				const outage = 2 * time.Second
				down := time.Now()
				if err := backend.Down(ctx); err != nil {
					t.Fatal(err)
				}
				probed := make(chan nodesim.AdmitResult, 1)
				go func() {
					time.Sleep(100 * time.Millisecond)
					probed <- probeAdmission(k, "window-backend", node)
				}()
				waitReadyz(t, topofit.LogPath, false, "backend_connected:", "the backend down")
				time.Sleep(outage - time.Since(down))
				if err := backend.Up(ctx); err != nil {
					t.Fatal(err)
				}
				r := <-probed
				if !r.Admit {
					t.Errorf("a pod admitted while the backend was down was rejected: %s: %s", r.Reason, r.Message)
				}
				t.Logf("backend down %v: a pod admitted 100ms into it was admitted=%v after %v (from the backend's exit)",
					outage, r.Admit, time.Since(down).Round(time.Millisecond))
				if _, err := k.WaitForStableDevices(ctx, nodesim.GPUResource, gpus, time.Second); err != nil {
					t.Fatalf("after the backend came back: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
				}
				waitReadyz(t, topofit.LogPath, true, "", "the backend back")
			}
		case nodeRestartAt:
			start := time.Now()
			if err := topofit.Stop(5 * time.Second); err != nil {
				t.Logf("topofit node stopped: %v", err)
			}
			if err := k.WaitForDevices(ctx, nodesim.GPUResource, 0); err != nil {
				t.Fatalf("kubelet did not mark the GPUs unhealthy when topofit node stopped: %v", err)
			}
			unhealthy := time.Now() // kubelet has no healthy GPU: the window is open
			if o.windows {
				probeWindow(t, k, "window-topofit-node", node, start, true)
			}
			if err := topofit.Start(); err != nil {
				t.Fatal(err)
			}
			if err := waitForSocket(ctx, topofit, registrar); err != nil {
				t.Fatal(err)
			}
			// Kubelet marks every device unhealthy when topofit's stream drops, healthy again once it
			// has re-registered with the backend behind it.
			if err := k.WaitForDevices(ctx, nodesim.GPUResource, gpus); err != nil {
				t.Fatalf("after a topofit node restart: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
			}
			t.Logf("topofit node restart: %d healthy GPUs again after %v (%v after kubelet marked them unhealthy)",
				gpus, time.Since(start).Round(time.Millisecond), time.Since(unhealthy).Round(time.Millisecond))
			if o.windows {
				waitReadyz(t, topofit.LogPath, true, "", "after the topofit node restart")
			}
		}
		held := map[string]bool{}
		for _, pp := range all {
			if !pp.done {
				for _, set := range pp.plan {
					for _, id := range set {
						held[id] = true
					}
				}
			}
		}
		var free []string
		for _, id := range ids {
			if !held[id] {
				free = append(free, id)
			}
		}
		if len(free) == 0 {
			t.Fatalf("round %d: no free GPU (the harness terminates pods after every round)", round)
		}
		batch := burst(rng, round, free, node, t0, &seq, foreign)
		all = append(all, batch...)
		if err := plans.publish(ctx, all); err != nil {
			t.Fatal(err)
		}
		time.Sleep(plansSettle)
		// Kubelet gets the pods in deliveries (its config channel batches what the watch brought) in
		// an order of their own, bind order, which need not be creation order: each delivery is
		// sorted by creation time, one after another.
		// A foreign pod comes first, alone, while every planned pod of the round is pending.
		var delivery []int
		for i, pp := range batch {
			if pp.foreign {
				delivery = append(delivery, i)
			}
		}
		nForeign := len(delivery)
		for _, i := range rng.Perm(len(batch)) {
			if !batch[i].foreign {
				delivery = append(delivery, i)
			}
		}
		var results []nodesim.AdmitResult
		for len(delivery) > 0 {
			n := 1 + rng.Intn(len(delivery))
			if nForeign > 0 {
				n, nForeign = 1, nForeign-1
			}
			var pods []*corev1.Pod
			for _, i := range delivery[:n] {
				pods = append(pods, batch[i].pod)
			}
			delivery = delivery[n:]
			start := time.Now()
			results = append(results, k.HandlePodAdditions(pods)...)
			per := time.Since(start) / time.Duration(len(pods))
			for range pods {
				admitTimes = append(admitTimes, per)
			}
		}
		for i, r := range results {
			if !r.Admit {
				st.rejected++
				t.Errorf("round %d: pod %s rejected: %s: %s", round, r.Pod.Name, r.Reason, r.Message)
				continue
			}
			pp := planned(batch, r.Pod.Name)
			for c, want := range pp.plan {
				if pp.foreign {
					// Offered only the GPUs no pending plan names (they are exactly enough), the
					// backend's choice is all of them.
					got, err := k.ContainerDevices(ctx, pp.pod, c, nodesim.GPUResource)
					st.foreign++
					if err == nil && reflect.DeepEqual(got.IDs, want) {
						st.foreignOff++
					} else {
						report("round %d: foreign pod %s got %v (%v), want the unplanned %v", round, pp.pod.Name, got.IDs, err, want)
					}
					continue
				}
				st.containers++
				got, err := k.ContainerDevices(ctx, pp.pod, c, nodesim.GPUResource)
				if err != nil {
					t.Errorf("%s/%s: %v", pp.pod.Name, c, err)
					continue
				}
				env := nodesim.SortedIDs(got.Env[nodesim.VisibleDevicesEnv])
				if reflect.DeepEqual(got.IDs, want) && reflect.DeepEqual(env, want) {
					st.exact++
				} else {
					report("round %d (%d of %d admitted): %s/%s got %v (env %v), planned %v", round, i+1, len(results), pp.pod.Name, c, got.IDs, env, want)
				}
			}
		}
		// PodResources List: kubelet's holdings; no GPU in two containers, every one a planned set.
		holdings, err := pr.Holdings(ctx, nodesim.GPUResource)
		if err != nil {
			t.Fatal(err)
		}
		owner := map[string]string{}
		for who, set := range holdings {
			for _, id := range set {
				if prev, ok := owner[id]; ok {
					st.doubleHeld++
					t.Errorf("round %d: %s held by %s and %s", round, id, prev, who)
				}
				owner[id] = who
			}
		}
		// Terminate about half of the live pods (at least one), in random order.
		var live []*plannedPod
		for _, pp := range all {
			if !pp.done {
				live = append(live, pp)
			}
		}
		rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		for i := 0; i < (len(live)+1)/2; i++ {
			live[i].done = true
			k.Terminate(live[i].pod.UID)
		}
	}
	calls, limited := k.PodResourcesCalls()
	t.Logf("PodResources calls over the run, all clients: %v; rejected by kubelet's rate limit (100 QPS, burst 10): %v", calls, limited)
	if foreign {
		t.Logf("foreign pods (no plan) admitted while plans were pending: %d, kept off the planned GPUs: %d", st.foreign, st.foreignOff)
	}
	t.Logf("%d pods, %d GPU containers: %d got exactly their planned set (%.1f%%); admission per pod (delivery time / pods) p50 %v p99 %v max %v",
		seq, st.containers, st.exact, 100*float64(st.exact)/float64(st.containers),
		percentile(admitTimes, 0.5).Round(time.Microsecond), percentile(admitTimes, 0.99).Round(time.Microsecond), percentile(admitTimes, 1).Round(time.Microsecond))
	return st
}

// plansSettle is how long the harness leaves topofit node to learn new plans (it polls --pods-file
// every 50 ms; a pod watch is faster) before kubelet admits the pods.
const plansSettle = 1500 * time.Millisecond

func planned(batch []*plannedPod, name string) *plannedPod {
	for _, pp := range batch {
		if pp.pod.Name == name {
			return pp
		}
	}
	panic("unknown pod " + name)
}

// probeAdmission admits one pod asking one GPU, with no plan, alone, and says what kubelet did; an
// admitted one is terminated at once (its GPU frees at the next allocation or List).
func probeAdmission(k *nodesim.Kubelet, name, node string) nodesim.AdmitResult {
	pod := nodesim.Pod(name, node, types.UID("uid-"+name), time.Now(), nodesim.Container{Name: "c", GPUs: 1})
	r := k.HandlePodAdditions([]*corev1.Pod{pod})[0]
	if r.Admit {
		k.Terminate(pod.UID)
	}
	return r
}

// probeWindow admits a probe pod inside a restart window opened at start. Kubelet has no healthy
// nvidia.com/gpu device then (docs/node.md, "Restart windows"), so the pod is rejected with
// UnexpectedAdmissionError "no healthy devices present"; unless closed (the window is known open),
// an admission means the window had closed already, and is reported as such.
func probeWindow(t *testing.T, k *nodesim.Kubelet, name, node string, start time.Time, open bool) {
	t.Helper()
	r := probeAdmission(k, name, node)
	at := time.Since(start).Round(time.Millisecond)
	const want = "no healthy devices present; cannot allocate unhealthy devices " + nodesim.GPUResource
	switch {
	case !r.Admit && (r.Reason != "UnexpectedAdmissionError" || !strings.Contains(r.Message, want)):
		t.Errorf("%s: rejected %v into the window with %s: %q, want UnexpectedAdmissionError with %q", name, at, r.Reason, r.Message, want)
	case r.Admit && open:
		t.Errorf("%s: admitted %v into the window, while kubelet had no healthy GPU", name, at)
	case r.Admit:
		t.Logf("%s: admitted %v after the restart: the window had closed already", name, at)
	default:
		t.Logf("%s: rejected %v into the window: %s: %s", name, at, r.Reason, r.Message)
	}
}

// waitReadyz polls topofit node's /readyz (its ops port from the last `ops=127.0.0.1:PORT` of its log)
// for up to 10 s until it answers 200 (ready) or 503 with a body containing missing; the test fails
// with the last answer otherwise.
func waitReadyz(t *testing.T, logPath string, ready bool, missing, when string) {
	t.Helper()
	var last string
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		code, body, err := opsGet(logPath, "/readyz")
		if err != nil {
			last = err.Error()
			continue
		}
		last = fmt.Sprintf("%d %q", code, body)
		if ready && code == http.StatusOK || !ready && code == http.StatusServiceUnavailable && strings.Contains(body, missing) {
			t.Logf("/readyz %s: %s", when, last)
			return
		}
	}
	t.Errorf("/readyz %s: want ready=%v (missing %q), last answer: %s", when, ready, missing, last)
}

// waitForSocket waits up to 30 s for p to create path; it fails at once when p exits.
func waitForSocket(ctx context.Context, p *harness.Process, path string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	exited := p.Exited()
	for {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before creating %s", p.Name, path)
		case <-ctx.Done():
			return fmt.Errorf("%s never appeared: %w", path, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
