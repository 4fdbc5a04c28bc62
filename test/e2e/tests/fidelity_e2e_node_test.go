package tests

// One fake GPU node of TestFidelityEndToEnd, in a process of its own: the device manager's sockets
// are kubelet's fixed paths, so each node needs its own mount namespace. The parent starts this test
// binary once per node under `unshare --mount` (startFakeNode) with the node's spec in
// $TOPOFIT_E2E_FAKE_NODE; the node runs until its stdin closes and answers the parent over HTTP.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

const fakeNodeEnv = "TOPOFIT_E2E_FAKE_NODE"

// fakeNodeSpec is what the parent hands a node process.
type fakeNodeSpec struct {
	Node              string   `json:"node"`
	Kubeconfig        string   `json:"kubeconfig"`        // kubelet's identity (the harness's admin)
	TopofitKubeconfig string   `json:"topofitKubeconfig"` // topofit node's
	Binary            string   `json:"binary"`            // topofit
	Listen            string   `json:"listen"`            // 127.0.0.1:PORT of the control API
	IDs               []string `json:"ids"`               // the stub's devices: the UUIDs nvidia-smi reports
	Topo              string   `json:"topo"`              // the `nvidia-smi topo -m` fixture
	SMI               string   `json:"smi"`               // the stand-in nvidia-smi
	LogDir            string   `json:"logDir"`
}

// nodeTruth is kubelet's view of its node.
type nodeTruth struct {
	// Holdings is PodResources List: namespace/pod/container -> sorted device IDs.
	Holdings map[string][]string `json:"holdings"`
	// Unhealthy are the devices the device manager knows but does not count healthy, sorted.
	Unhealthy []string `json:"unhealthy"`
	// Containers: per GPU container of each running pod, kubelet's recorded IDs and the
	// container's NVIDIA_VISIBLE_DEVICES (init containers too); only when asked (?containers=1).
	Containers map[string]containerDevices `json:"containers,omitempty"`
	Admissions []nodesim.Admission         `json:"admissions"`
}

type containerDevices struct {
	IDs []string `json:"ids"`
	Env []string `json:"env"`
}

// TestNodesimChildProcess is the node process itself; run directly it skips.
func TestNodesimChildProcess(t *testing.T) {
	raw := os.Getenv(fakeNodeEnv)
	if raw == "" {
		t.Skip("a fake GPU node of TestFidelityEndToEnd: runs only as its child process")
	}
	var spec fakeNodeSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		t.Fatalf("%s: %v", fakeNodeEnv, err)
	}
	if !nodesim.Hermetic(t) {
		t.Fatal("the fake node must be started in its own mount namespace (startFakeNode)")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	k, err := nodesim.StartKubelet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop(ctx)
	registrar := filepath.Join(nodesim.DevicePluginDir, "topofit-registrar.sock")
	topofit := &harness.Process{Name: "topofit-node", Path: spec.Binary,
		LogPath: filepath.Join(spec.LogDir, "topofit-node-"+spec.Node+".log"),
		Args: []string{"--log-level", "debug", "node", "--node-name", spec.Node, "--device-plugin-dir", nodesim.DevicePluginDir,
			"--registrar-socket", filepath.Base(registrar), "--pod-resources-socket", nodesim.PodResourcesSocket,
			"--kubeconfig", spec.TopofitKubeconfig, "--nvidia-smi", spec.SMI},
		// The stand-in nvidia-smi prints the fixture and UUIDs GPU-<node>-NNNN: the stub's IDs.
		Env: []string{"FAKE_SMI_TOPO=" + spec.Topo, "FAKE_SMI_UUID_SEED=" + spec.Node}}
	if err := topofit.Start(); err != nil {
		t.Fatal(err)
	}
	defer topofit.Stop(5 * time.Second)
	if err := waitForSocket(ctx, topofit, registrar); err != nil {
		t.Fatalf("topofit node: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
	}
	backend, err := nodesim.StartBackend(ctx, filepath.Join(nodesim.DevicePluginDir, "nvidia-gpu.sock"), registrar, spec.IDs, nodesim.PreferFirst)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, time.Minute)
	defer waitCancel()
	if err := k.WaitForDevices(waitCtx, nodesim.GPUResource, len(spec.IDs)); err != nil {
		t.Fatalf("kubelet never saw topofit's devices: %v\n%s", err, harness.TailFile(topofit.LogPath, 20))
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	node, err := nodesim.StartAPINode(ctx, k, client, spec.Node)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := nodesim.DialPodResources()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()

	fn := &fakeNodeServer{spec: spec, k: k, node: node, pr: pr, backend: backend, unhealthy: map[string]bool{}}
	l, err := net.Listen("tcp", spec.Listen)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: fn.mux(ctx)}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	t.Logf("node %s ready: %d GPUs through topofit node, control API on %s", spec.Node, len(spec.IDs), spec.Listen)
	// Until the parent closes our stdin (or dies).
	_, _ = io.Copy(io.Discard, os.Stdin)
	t.Logf("node %s: stdin closed, stopping", spec.Node)
}

type fakeNodeServer struct {
	spec    fakeNodeSpec
	k       *nodesim.Kubelet
	node    *nodesim.APINode
	pr      *nodesim.PodResources
	backend *nodesim.Backend

	mu        sync.Mutex // one health change at a time
	unhealthy map[string]bool
}

func (f *fakeNodeServer) mux(ctx context.Context) *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	m.HandleFunc("GET /admissions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, f.node.Admissions())
	})
	m.HandleFunc("GET /truth", func(w http.ResponseWriter, r *http.Request) {
		t, err := f.truth(r.Context(), r.URL.Query().Get("containers") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, t)
	})
	// POST /health?id=ID&healthy=0|1: the stub's ListAndWatch sends the device list with the new
	// health; answers when kubelet's device manager agrees. `at`: just before the stub sent it.
	m.HandleFunc("POST /health", func(w http.ResponseWriter, r *http.Request) {
		id, healthy := r.URL.Query().Get("id"), r.URL.Query().Get("healthy") == "1"
		at, err := f.setHealth(ctx, id, healthy)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, map[string]time.Time{"at": at})
	})
	m.HandleFunc("POST /pause", func(w http.ResponseWriter, r *http.Request) {
		f.node.Pause(r.URL.Query().Get("on") == "1")
	})
	// POST /exit?namespace=NS&name=NAME: the pod's containers exit 0.
	m.HandleFunc("POST /exit", func(w http.ResponseWriter, r *http.Request) {
		at, err := f.node.Exit(ctx, r.URL.Query().Get("namespace"), r.URL.Query().Get("name"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		writeJSON(w, map[string]time.Time{"at": at})
	})
	return m
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeNodeServer) setHealth(ctx context.Context, id string, healthy bool) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	known := false
	for _, d := range f.spec.IDs {
		known = known || d == id
	}
	if !known {
		return time.Time{}, fmt.Errorf("no device %q", id)
	}
	f.unhealthy[id] = !healthy
	var devs []*pluginapi.Device
	for _, d := range f.spec.IDs {
		h := pluginapi.Healthy
		if f.unhealthy[d] {
			h = pluginapi.Unhealthy
		}
		devs = append(devs, &pluginapi.Device{ID: d, Health: h})
	}
	at := time.Now()
	sent := make(chan struct{})
	go func() { f.backend.Stub.Update(devs); close(sent) }()
	select {
	case <-sent:
	case <-time.After(5 * time.Second):
		return at, fmt.Errorf("the stub's ListAndWatch took no update for 5 s (no stream open?)")
	}
	for deadline := time.Now().Add(5 * time.Second); ; {
		if f.healthy(id) == healthy {
			return at, nil
		}
		if time.Now().After(deadline) {
			return at, fmt.Errorf("kubelet's device manager still says %s healthy=%v after 5 s", id, !healthy)
		}
		select {
		case <-ctx.Done():
			return at, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func (f *fakeNodeServer) healthy(id string) bool {
	_, ok := f.k.Manager().GetAllocatableDevices()[nodesim.GPUResource][id]
	return ok
}

func (f *fakeNodeServer) truth(ctx context.Context, containers bool) (*nodeTruth, error) {
	holdings, err := f.pr.Holdings(ctx, nodesim.GPUResource)
	if err != nil {
		return nil, fmt.Errorf("PodResources List: %w", err)
	}
	t := &nodeTruth{Holdings: map[string][]string{}, Admissions: f.node.Admissions()}
	for who, ids := range holdings {
		if len(ids) > 0 {
			t.Holdings[who] = ids
		}
	}
	for _, id := range f.spec.IDs {
		if !f.healthy(id) {
			t.Unhealthy = append(t.Unhealthy, id)
		}
	}
	sort.Strings(t.Unhealthy)
	if !containers {
		return t, nil
	}
	t.Containers = map[string]containerDevices{}
	for _, a := range t.Admissions {
		if !a.Admit || !f.node.Running(a.UID) {
			continue
		}
		var all []corev1.Container
		all = append(append(all, a.Pod.Spec.InitContainers...), a.Pod.Spec.Containers...)
		for _, c := range all {
			if _, ok := c.Resources.Limits[nodesim.GPUResource]; !ok {
				continue
			}
			d, err := f.k.ContainerDevices(ctx, a.Pod, c.Name, nodesim.GPUResource)
			if err != nil {
				return nil, fmt.Errorf("%s/%s/%s: %w", a.Namespace, a.Name, c.Name, err)
			}
			t.Containers[a.Namespace+"/"+a.Name+"/"+c.Name] = containerDevices{IDs: d.IDs,
				Env: nodesim.SortedIDs(d.Env[nodesim.VisibleDevicesEnv])}
		}
	}
	return t, nil
}

// smiUUIDs are the UUIDs the stand-in nvidia-smi (extender/node/testdata/fake-nvidia-smi) prints
// for a node with n GPUs and FAKE_SMI_UUID_SEED=node.
func smiUUIDs(node string, n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, "GPU-"+node+"-"+fmt.Sprintf("%04d", i))
	}
	return out
}
