package tests

// Scheduling throughput through the real kube-scheduler, scheduler_perf style: N fake 8-GPU nodes,
// then P pods of mixed GPU sizes created at once; the figure is pods bound per second from the first
// create to the last bind, with the CPU each process used over that window. Each run starts a fresh
// control plane; every configuration runs on the same nodes and the same pod sequence.
//
//   go test ./tests -run TestThroughput                               # the short version, 1,000 x 2,000 (CTest runs it)
//   TOPOFIT_E2E_THROUGHPUT=1000x2000,5000x2000 go test ./tests -run TestThroughput -timeout 60m -v
//
// TOPOFIT_E2E_THROUGHPUT lists NODESxPODS sizes; TOPOFIT_E2E_THROUGHPUT_CONFIGS the configurations
// (default "none,topofit"; see throughputConfigs); TOPOFIT_E2E_THROUGHPUT_REPEAT runs each that
// many times; TOPOFIT_E2E_THROUGHPUT_NO_GPU the percentage of pods that ask for no GPU (default 0). Results are logged as a table and written to $TOPOFIT_E2E_ARTIFACTS/throughput.json.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"topofit.dev/e2e/harness"
)

// A scheduler configuration the benchmark compares.
type throughputConfig struct {
	Name     string
	Extender bool
	// ServeArgs are added to `topofit serve`'s command line.
	ServeArgs []string
	// Edit changes the deployed manifests/base/scheduler-config.yaml (parsed as a map) for this run.
	Edit func(cfg map[string]any)
}

// The deployed configuration, with kube-scheduler's client raised to 5,000 requests/s as
// scheduler_perf and large clusters run it, without the extender ("none") and with it ("topofit":
// filter only, keeping the best-scored nodes); "-default-qps" variants keep the client limit the
// manifests deploy (kube-scheduler's default, 50/s); "-adaptive-scoring" ones drop
// percentageOfNodesToScore: 100 for kube-scheduler's adaptive default; "topofit-prioritize" calls
// filter (passing every node that fits) and prioritize.
func throughputConfigs() map[string]throughputConfig {
	fastClient := func(cfg map[string]any) {
		cc, _ := cfg["clientConnection"].(map[string]any)
		if cc == nil {
			cc = map[string]any{}
		}
		cc["qps"], cc["burst"] = 5000, 5000
		cfg["clientConnection"] = cc
	}
	noExtender := func(cfg map[string]any) { delete(cfg, "extenders") }
	withPrioritize := func(cfg map[string]any) {
		for _, e := range cfg["extenders"].([]any) {
			if m := e.(map[string]any); m["filterVerb"] != nil { // the GPU entry, not the one for pods without GPUs
				m["prioritizeVerb"] = "prioritize"
			}
		}
	}
	adaptive := func(cfg map[string]any) { delete(cfg, "percentageOfNodesToScore") }
	gpuEntryOnly := func(cfg map[string]any) {
		var keep []any
		for _, e := range cfg["extenders"].([]any) {
			if e.(map[string]any)["filterVerb"] != nil {
				keep = append(keep, e)
			}
		}
		cfg["extenders"] = keep
	}
	both := func(fs ...func(map[string]any)) func(map[string]any) {
		return func(cfg map[string]any) {
			for _, f := range fs {
				f(cfg)
			}
		}
	}
	return map[string]throughputConfig{
		"none":                  {Name: "none", Edit: both(fastClient, noExtender)},
		"topofit":               {Name: "topofit", Extender: true, Edit: fastClient},
		"none-default-qps":      {Name: "none-default-qps", Edit: noExtender},
		"topofit-default-qps":   {Name: "topofit-default-qps", Extender: true},
		"none-adaptive-scoring": {Name: "none-adaptive-scoring", Edit: both(fastClient, noExtender, adaptive)},
		"topofit-adaptive-scoring": {Name: "topofit-adaptive-scoring", Extender: true,
			Edit: both(fastClient, adaptive)},
		// Filter and prioritize both called, filter passing every node that fits (serve's default).
		"topofit-prioritize": {Name: "topofit-prioritize", Extender: true, Edit: both(fastClient, withPrioritize),
			ServeArgs: []string{"--filter-keeps-best=false"}},
		// As deployed, but every bind also writes a GPUsAssigned Event (topofit serve --bind-events all).
		"topofit-bind-events-all": {Name: "topofit-bind-events-all", Extender: true, Edit: fastClient,
			ServeArgs: []string{"--bind-events", "all"}},
		// Without the second entry (prioritize-pods-without-gpus): pods without GPUs never reach topofit.
		"topofit-gpu-entry-only": {Name: "topofit-gpu-entry-only", Extender: true, Edit: both(fastClient, gpuEntryOnly)},
	}
}

type throughputResult struct {
	Config      string  `json:"config"`
	Nodes       int     `json:"nodes"`
	Pods        int     `json:"pods"`
	Seconds     float64 `json:"seconds"`
	PodsPerSec  float64 `json:"pods_per_second"`
	APIServer   float64 `json:"cpu_kube_apiserver_s"`
	Scheduler   float64 `json:"cpu_kube_scheduler_s"`
	Extender    float64 `json:"cpu_extender_s"`
	TestProcess float64 `json:"cpu_etcd_and_client_s"`
	// Placements: pod name -> node and GPU ids, to compare configurations on the same sequence.
	Placements map[string]string `json:"-"`
}

func parseSizes(t *testing.T, s string) [][2]int {
	var out [][2]int
	for _, part := range strings.Split(s, ",") {
		nm := strings.SplitN(strings.TrimSpace(part), "x", 2)
		if len(nm) != 2 {
			t.Fatalf("TOPOFIT_E2E_THROUGHPUT: %q is not NODESxPODS", part)
		}
		n, err1 := strconv.Atoi(nm[0])
		p, err2 := strconv.Atoi(nm[1])
		if err1 != nil || err2 != nil || n <= 0 || p <= 0 {
			t.Fatalf("TOPOFIT_E2E_THROUGHPUT: %q is not NODESxPODS", part)
		}
		out = append(out, [2]int{n, p})
	}
	return out
}

// noGPUPrefix names the pods that ask for no GPU (2 cores).
const noGPUPrefix = "tp-cpu-"

// The pod sizes of the benchmark: mostly 1-GPU pods, some 2, 4 and 8, from a fixed seed; noGPU
// percent of them (from a seed of their own) ask for no GPU instead.
func throughputPods(n, noGPU int) []harness.PodSpec {
	rng := rand.New(rand.NewSource(42))
	cpuRng := rand.New(rand.NewSource(43))
	pods := make([]harness.PodSpec, n)
	for i := range pods {
		if cpuRng.Intn(100) < noGPU {
			pods[i] = harness.PodSpec{Name: fmt.Sprintf("%s%05d", noGPUPrefix, i), CPU: "2"}
			continue
		}
		gpus := 1
		switch r := rng.Intn(100); {
		case r >= 95:
			gpus = 8
		case r >= 85:
			gpus = 4
		case r >= 70:
			gpus = 2
		}
		pods[i] = harness.PodSpec{Name: fmt.Sprintf("tp-%05d", i), GPUs: gpus}
	}
	return pods
}

var throughputProfiles = []string{"dgx1-v100", "hgx-a100-8", "pcie-8-dual-socket"}

func cpuSelf() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func runThroughput(t *testing.T, cfg throughputConfig, nodes, pods int) throughputResult {
	t.Helper()
	ctx := context.Background()
	// The configuration for this run, derived from the deployed one.
	cfgPath := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	writeSchedulerConfig(t, cfgPath, cfg.Edit)
	opts := harness.Options{SchedulerConfig: cfgPath}
	if profileSeconds() > 0 {
		enableProfiling(&opts)
	}
	var ext *harness.TopofitExtender
	if cfg.Extender {
		ext = &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
		ext.Args = cfg.ServeArgs
		opts.Extender = ext
	}
	c := harness.Start(t, opts)

	// Nodes, 16 creators at a time.
	specs := make([]harness.NodeSpec, nodes)
	for i := range specs {
		specs[i] = harness.GPUNode(fmt.Sprintf("gpu-%05d", i), 8, throughputProfiles[i%len(throughputProfiles)])
	}
	parallel(t, len(specs), 16, func(i int) error { _, err := c.CreateNode(ctx, specs[i]); return err })
	if ext != nil {
		waitTopofitNodes(t, c, nodes)
	}

	// Count binds with an informer, which lists again and re-watches when the API server drops a
	// watcher it finds slow (it does, on this 2-core machine under a burst of creates).
	bound := make(chan struct{}, pods)
	placements := map[string]string{}
	var pmu sync.Mutex
	onPod := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok || p.Spec.NodeName == "" {
			return
		}
		pmu.Lock()
		_, seen := placements[p.Name]
		placements[p.Name] = p.Spec.NodeName + " " + p.Annotations[harness.AnnotationGPUIDs]
		pmu.Unlock()
		if !seen {
			bound <- struct{}{}
		}
	}
	factory := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(c.Namespace))
	informer := factory.Core().V1().Pods().Informer()
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onPod, UpdateFunc: func(_, obj any) { onPod(obj) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	factory.Start(stop)
	factory.WaitForCacheSync(stop)

	cpu0 := [4]float64{c.APIServer.CPUSeconds(), c.Scheduler.CPUSeconds(), 0, cpuSelf()}
	if ext != nil {
		cpu0[2] = ext.CPUSeconds()
	}
	noGPU, _ := strconv.Atoi(os.Getenv("TOPOFIT_E2E_THROUGHPUT_NO_GPU"))
	specsP := throughputPods(pods, noGPU)
	waitProfiles := func() {}
	if n := profileSeconds(); n > 0 {
		waitProfiles = startProfiles(t, c, n)
	}
	start := time.Now()
	go parallel(t, len(specsP), 32, func(i int) error { _, err := c.CreatePod(ctx, specsP[i]); return err })
	deadline := time.After(time.Duration(pods)*200*time.Millisecond + 2*time.Minute)
	for got := 0; got < pods; got++ {
		select {
		case <-bound:
		case <-deadline:
			unbound := 0
			var sample string
			if list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{}); err == nil {
				for _, p := range list.Items {
					if p.Spec.NodeName == "" {
						unbound++
						if sample == "" {
							sample = fmt.Sprintf("%s: %+v", p.Name, p.Status.Conditions)
						}
					}
				}
				t.Fatalf("%s: %d of %d pods seen bound before the deadline; %d pods exist, %d unbound (%s); scheduler log:\n%s",
					cfg.Name, got, pods, len(list.Items), unbound, sample, harness.TailFile(c.Scheduler.LogPath, 20))
			}
			t.Fatalf("%s: %d of %d pods bound before the deadline", cfg.Name, got, pods)
		}
	}
	elapsed := time.Since(start).Seconds()
	if profileSeconds() > 0 {
		waitProfiles()
		saveAPIServerMetrics(t, c)
	}
	r := throughputResult{Config: cfg.Name, Nodes: nodes, Pods: pods, Seconds: elapsed, PodsPerSec: float64(pods) / elapsed,
		APIServer: c.APIServer.CPUSeconds() - cpu0[0], Scheduler: c.Scheduler.CPUSeconds() - cpu0[1],
		TestProcess: cpuSelf() - cpu0[3]}
	if ext != nil {
		r.Extender = ext.CPUSeconds() - cpu0[2]
	}
	pmu.Lock()
	r.Placements = placements
	pmu.Unlock()
	if ext != nil {
		checkNoSharedGPU(t, r.Placements)
	}
	return r
}

// parallel runs f(0..n-1) on `workers` goroutines and fails the test on the first error.
func parallel(t *testing.T, n, workers int, f func(i int) error) {
	var wg sync.WaitGroup
	next := make(chan int)
	errs := make(chan error, 1)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	select {
	case err := <-errs:
		t.Error(err)
	default:
	}
}

// waitTopofitNodes waits until topofit's model holds every node, so no pod meets a half-known cluster.
func waitTopofitNodes(t *testing.T, c *harness.Cluster, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var body struct {
			Totals struct {
				Nodes int `json:"nodes"`
			} `json:"totals"`
		}
		if err := getJSON("http://"+c.ExtenderAddr+"/api/v1/nodes", &body); err == nil && body.Totals.Nodes >= want {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("topofit never saw %d nodes", want)
}

// checkNoSharedGPU fails when two pods hold the same GPU of a node.
func checkNoSharedGPU(t *testing.T, placements map[string]string) {
	t.Helper()
	holder := map[string]string{}
	for pod, p := range placements {
		if strings.HasPrefix(pod, noGPUPrefix) {
			continue
		}
		parts := strings.SplitN(p, " ", 2)
		if len(parts) < 2 || parts[1] == "" {
			t.Errorf("pod %s bound to %s without %s", pod, parts[0], harness.AnnotationGPUIDs)
			continue
		}
		for _, id := range parseGPUIDs(parts[1]) {
			key := fmt.Sprintf("%s/%d", parts[0], id)
			if other, taken := holder[key]; taken {
				t.Errorf("GPU %s given to %s and %s", key, other, pod)
			}
			holder[key] = pod
		}
	}
}

func TestThroughput(t *testing.T) {
	sizes := "1000x2000"
	if s := os.Getenv("TOPOFIT_E2E_THROUGHPUT"); s != "" {
		sizes = s
	}
	names := []string{"none", "topofit"}
	if s := os.Getenv("TOPOFIT_E2E_THROUGHPUT_CONFIGS"); s != "" {
		names = strings.Split(s, ",")
	}
	repeat := 1
	if s := os.Getenv("TOPOFIT_E2E_THROUGHPUT_REPEAT"); s != "" {
		repeat, _ = strconv.Atoi(s)
	}
	all := throughputConfigs()
	var results []throughputResult
	for _, size := range parseSizes(t, sizes) {
		for rep := 0; rep < repeat; rep++ {
			for _, name := range names {
				cfg, ok := all[name]
				if !ok {
					t.Fatalf("unknown configuration %q", name)
				}
				var r throughputResult
				t.Run(fmt.Sprintf("%s/%dx%d/%d", name, size[0], size[1], rep), func(t *testing.T) {
					r = runThroughput(t, cfg, size[0], size[1])
				})
				if r.Pods > 0 {
					results = append(results, r)
				}
			}
		}
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Nodes < results[j].Nodes })
	var b strings.Builder
	fmt.Fprintf(&b, "%-26s %6s %6s %8s %8s | CPU s: %10s %10s %8s %12s\n", "config", "nodes", "pods", "seconds",
		"pods/s", "apiserver", "scheduler", "topofit", "etcd+client")
	for _, r := range results {
		fmt.Fprintf(&b, "%-26s %6d %6d %8.1f %8.1f | %17.1f %10.1f %8.1f %12.1f\n", r.Config, r.Nodes, r.Pods,
			r.Seconds, r.PodsPerSec, r.APIServer, r.Scheduler, r.Extender, r.TestProcess)
	}
	t.Logf("throughput:\n%s", b.String())
	// The short run's bound (issue 27): topofit's median pods/s against the median without an
	// extender, per size, at least 0.7x. The target is 0.9x (docs/throughput.md: 0.91x at 1,000 nodes,
	// single pairs 0.86-0.94x); the floor leaves room for the noise of a shared 2-core machine.
	floor := 0.7
	if s := os.Getenv("TOPOFIT_E2E_THROUGHPUT_MIN_RATIO"); s != "" {
		floor, _ = strconv.ParseFloat(s, 64)
	}
	for _, size := range parseSizes(t, sizes) {
		med := func(config string) float64 {
			var v []float64
			for _, r := range results {
				if r.Config == config && r.Nodes == size[0] && r.Pods == size[1] {
					v = append(v, r.PodsPerSec)
				}
			}
			if len(v) == 0 {
				return 0
			}
			sort.Float64s(v)
			return v[len(v)/2]
		}
		if none, ext := med("none"), med("topofit"); none > 0 && ext > 0 {
			t.Logf("%dx%d: topofit / none = %.2f", size[0], size[1], ext/none)
			if ext/none < floor {
				t.Errorf("%dx%d: topofit binds %.1f pods/s, %.2fx the %.1f without an extender (floor %.2f)",
					size[0], size[1], ext, ext/none, none, floor)
			}
		}
	}
	if dir := os.Getenv("TOPOFIT_E2E_ARTIFACTS"); dir != "" {
		if raw, err := json.MarshalIndent(results, "", "  "); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "throughput.json"), raw, 0o644)
		}
	}
}

func getJSON(url string, into any) error {
	client := http.Client{Timeout: 5 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, res.Status)
	}
	return json.NewDecoder(res.Body).Decode(into)
}
