package tests

// The node every topofit node fidelity test runs: kubelet's device manager and PodResources server
// (nodesim, the v1.36.3 code), topofit node registered to it as nvidia.com/gpu, and upstream's stub
// plugin behind topofit node (registered to topofit's registrar) preferring the lexicographically
// first free GPUs - so a container that gets a plan other than those got it from topofit node.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

type nodeRig struct {
	k         *nodesim.Kubelet
	topofit   *harness.Process
	backend   *nodesim.Backend
	registrar string // topofit node's registrar socket, where the stub registers
	ids       []string
}

// startNodeRig starts kubelet, topofit node (bin node --node-name node ... args, its log in dir) and
// the stub with `gpus` devices, and waits until kubelet has them all healthy. Everything stops when
// the test ends; the tail of topofit node's log is printed when it failed.
func startNodeRig(ctx context.Context, t *testing.T, bin, node string, gpus int, dir string, args ...string) *nodeRig {
	t.Helper()
	return startNodeRigIDs(ctx, t, bin, node, nodesim.GPUIDs(gpus), dir, args...)
}

// startNodeRigIDs is startNodeRig with the stub serving the device ids `ids` (e.g. replica ids).
func startNodeRigIDs(ctx context.Context, t *testing.T, bin, node string, ids []string, dir string, args ...string) *nodeRig {
	t.Helper()
	gpus := len(ids)
	k, err := nodesim.StartKubelet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Stop(context.Background()) })
	r := &nodeRig{k: k, registrar: filepath.Join(nodesim.DevicePluginDir, "topofit-registrar.sock"), ids: ids}
	r.topofit = &harness.Process{Name: "topofit-node", Path: bin, LogPath: filepath.Join(dir, "topofit-node.log"),
		Args: append([]string{"node", "--node-name", node, "--device-plugin-dir", nodesim.DevicePluginDir,
			"--registrar-socket", filepath.Base(r.registrar)}, args...)}
	if err := r.topofit.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.topofit.Stop(5 * time.Second) })
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("topofit node log (%s), last lines:\n%s", r.topofit.LogPath, harness.TailFile(r.topofit.LogPath, 40))
		}
	})
	if err := waitForSocket(ctx, r.topofit, r.registrar); err != nil {
		t.Fatalf("topofit node did not serve its registrar: %v\n%s", err, harness.TailFile(r.topofit.LogPath, 20))
	}
	r.backend, err = nodesim.StartBackend(ctx, filepath.Join(nodesim.DevicePluginDir, "nvidia-gpu.sock"), r.registrar, r.ids, nodesim.PreferFirst)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	if err := k.WaitForDevices(waitCtx, nodesim.GPUResource, gpus); err != nil {
		t.Fatalf("kubelet never saw topofit's devices: %v\n%s", err, harness.TailFile(r.topofit.LogPath, 20))
	}
	return r
}

// startFilePlansRig is startNodeRigIDs reconciling (reconcilingArgs) with its plans from a --pods-file in
// dir, published empty before topofit node starts.
func startFilePlansRig(ctx context.Context, t *testing.T, bin, node string, ids []string, dir string) (*nodeRig, *filePlans) {
	t.Helper()
	plans := &filePlans{path: filepath.Join(dir, "pods.json"), node: node}
	if err := plans.publish(ctx, nil); err != nil {
		t.Fatal(err)
	}
	return startNodeRigIDs(ctx, t, bin, node, ids, dir, reconcilingArgs(plans)...), plans
}

// mainPod is a pod of one container "main" asking for `gpus` GPUs on node, created `at` minutes after
// t0, planned on `plan` (nil: no plan, a foreign pod).
func mainPod(node string, t0 time.Time, name string, at int, plan []string, gpus int) *plannedPod {
	return &plannedPod{plan: map[string][]string{"main": sorted(plan)}, foreign: plan == nil,
		pod: nodesim.Pod(name, node, types.UID("uid-"+name), t0.Add(time.Duration(at)*time.Minute),
			nodesim.Container{Name: "main", GPUs: gpus})}
}

// reconcilingArgs: topofit node with kubelet's PodResources, plans from `plans`, a reconcile every
// 300 ms (waitReconciles counts them on the ops listener) and a debug line per preference call.
func reconcilingArgs(plans planSource) []string {
	return append([]string{"--pod-resources-socket", nodesim.PodResourcesSocket, "--reconcile-interval", "300ms",
		"--ops-listen", "127.0.0.1:0", "--log-level", "debug"}, plans.args()...)
}

// opsGet reads path from topofit node's ops listener (its port from the last `ops=127.0.0.1:PORT`
// of its log: --ops-listen 127.0.0.1:0).
func opsGet(logPath, path string) (int, string, error) {
	log, _ := os.ReadFile(logPath)
	at := strings.LastIndex(string(log), "ops=127.0.0.1:")
	if at < 0 {
		return 0, "", fmt.Errorf("no ops port in the log")
	}
	var port int
	fmt.Sscanf(string(log[at+len("ops=127.0.0.1:"):]), "%d", &port)
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// waitReconciles waits until topofit node has ended n more reconciles (PodResources List answered,
// topofit_node_reconciles_total) than when called: with n = 2, one whole reconcile began after the call.
func (r *nodeRig) waitReconciles(t *testing.T, n int) {
	t.Helper()
	count := func() float64 {
		_, body, err := opsGet(r.topofit.LogPath, "/metrics")
		if err != nil {
			return -1
		}
		return metricValue(body, "topofit_node_reconciles_total") // pods_without_gpus_test.go
	}
	from := count()
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if from < 0 {
			from = count()
		} else if count() >= from+float64(n) {
			return
		}
	}
	t.Fatalf("topofit node did not reconcile %d times in 20 s (reconciles_total was %v)", n, from)
}

// mustAdmit admits pod through kubelet's device manager or fails the test; `what` says when.
func mustAdmit(t *testing.T, k *nodesim.Kubelet, pod *corev1.Pod, what string) {
	t.Helper()
	if r := k.HandlePodAdditions([]*corev1.Pod{pod})[0]; !r.Admit {
		t.Fatalf("%s: %s rejected: %s: %s", what, pod.Name, r.Reason, r.Message)
	}
}

// admittedDevices admits pod (mustAdmit) and returns the GPUs kubelet gave its container `main`.
func admittedDevices(ctx context.Context, t *testing.T, k *nodesim.Kubelet, pod *corev1.Pod, what string) []string {
	t.Helper()
	mustAdmit(t, k, pod, what)
	got, err := k.ContainerDevices(ctx, pod, "main", nodesim.GPUResource)
	if err != nil {
		t.Fatal(err)
	}
	return got.IDs
}
