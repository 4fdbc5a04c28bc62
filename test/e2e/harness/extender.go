package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"topofit.dev/e2e/skip"
)

// Extender is what serves the scheduler's extender calls on Cluster.ExtenderAddr, under the path
// of the configuration's urlPrefix (/scheduler in manifests/base/scheduler-config.yaml).
type Extender interface {
	Name() string
	// Start serves on c.ExtenderAddr and returns once it accepts connections. It is called again
	// after Stop to restart on the same address.
	Start(ctx context.Context, c *Cluster) error
	// Stop ends it: gracefully, or at once as in a crash when kill is true.
	Stop(kill bool) error
}

// ---------------------------------------------------------------------------------------------
// The real topofit binary.

// TopofitExtender runs `topofit serve --kubeconfig K --listen ADDR --filter-keeps-best [Args...]`,
// or any other extender process when Command is set.
type TopofitExtender struct {
	Binary string
	Args   []string
	Env    []string
	// Command, when set, gives the whole argument list (after Binary) from the kubeconfig path and
	// the address to listen on, for extenders with another command line.
	Command func(kubeconfig, listen string) []string
	proc    *Process
}

func (e *TopofitExtender) Name() string { return "topofit" }

func (e *TopofitExtender) Start(ctx context.Context, c *Cluster) error {
	if e.proc == nil {
		// As manifests/base deploys it: filter keeps the best-scored nodes (its scheduler config has
		// no prioritizeVerb).
		args := append([]string{"serve", "--kubeconfig", c.Kubeconfig("topofit"), "--listen", c.ExtenderAddr,
			"--filter-keeps-best"}, e.Args...)
		if e.Command != nil {
			args = e.Command(c.Kubeconfig("topofit"), c.ExtenderAddr)
		}
		e.proc = &Process{Name: "topofit", Path: e.Binary, Args: args, Env: e.Env,
			LogPath: filepath.Join(c.Dir, "extender.log")}
	}
	if err := e.proc.Start(); err != nil {
		return err
	}
	return waitTCP(ctx, c.ExtenderAddr, 30*time.Second, e.proc)
}

func (e *TopofitExtender) Stop(kill bool) error {
	if e.proc == nil {
		return nil
	}
	if kill {
		return e.proc.Kill()
	}
	return e.proc.Stop(10 * time.Second)
}

// CPUSeconds is the CPU time topofit's current run has used (0 when it is not running).
func (e *TopofitExtender) CPUSeconds() float64 {
	if e.proc == nil {
		return 0
	}
	return e.proc.CPUSeconds()
}

// LogPath is topofit's log file (stdout and stderr of every run).
func (e *TopofitExtender) LogPath() string {
	if e.proc == nil {
		return ""
	}
	return e.proc.LogPath
}

func waitTCP(ctx context.Context, addr string, timeout time.Duration, p *Process) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if p != nil && !p.Running() {
			return fmt.Errorf("%s exited before listening on %s; log tail:\n%s", p.Name, addr, TailFile(p.LogPath, 40))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("nothing listening on %s after %v", addr, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var topofitCheck struct {
	sync.Once
	path, reason string
	missing      bool
}

// TopofitBinary returns the topofit binary named by $TOPOFIT_BINARY. The test is skipped when it is
// unset (the suite run by hand without a build) and fails when it names no file.
func TopofitBinary(t testing.TB) string {
	t.Helper()
	topofitCheck.Do(func() {
		p := os.Getenv("TOPOFIT_BINARY")
		if p == "" {
			topofitCheck.reason = "TOPOFIT_BINARY is unset (run.sh and CTest set it to the built topofit)"
			return
		}
		if _, err := os.Stat(p); err != nil {
			topofitCheck.reason = fmt.Sprintf("TOPOFIT_BINARY=%s: %v", p, err)
			topofitCheck.missing = true
			return
		}
		topofitCheck.path = p
	})
	if topofitCheck.missing {
		t.Fatal(topofitCheck.reason)
	}
	if topofitCheck.path == "" {
		skip.OrFail(t, topofitCheck.reason)
	}
	return topofitCheck.path
}

// ---------------------------------------------------------------------------------------------
// A fake extender inside the test process: proves the scheduler side of the protocol.

// FakeExtender implements filter, prioritize, bind and preempt in the test process. Bind creates
// the Binding with client-go, as topofit must.
type FakeExtender struct {
	// Filter decides whether a pod fits a node; nil accepts every node. A rejected node goes to
	// FailedAndUnresolvableNodes with reason.
	Filter func(pod *corev1.Pod, node string) (ok bool, reason string)
	// Score is the prioritize score (0-10) of a node; nil gives 0.
	Score func(pod *corev1.Pod, node string) int64

	mu     sync.Mutex
	calls  map[string]int
	binds  map[string]string // namespace/name -> node
	srv    *http.Server
	client kubernetes.Interface
}

func (f *FakeExtender) Name() string { return "fake" }

// Calls is how often a verb ("filter", "prioritize", "bind", "preempt") was called.
func (f *FakeExtender) Calls(verb string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[verb]
}

// BoundTo is the node the fake bound namespace/name to ("" if it did not).
func (f *FakeExtender) BoundTo(ns, name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.binds[ns+"/"+name]
}

func (f *FakeExtender) count(verb string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[verb]++
}

func (f *FakeExtender) Start(ctx context.Context, c *Cluster) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig("topofit"))
	if err != nil {
		return err
	}
	if f.client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	l, err := net.Listen("tcp", c.ExtenderAddr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /scheduler/filter", f.filter)
	mux.HandleFunc("POST /scheduler/prioritize", f.prioritize)
	mux.HandleFunc("POST /scheduler/bind", f.bind)
	mux.HandleFunc("POST /scheduler/preempt", f.preempt)
	f.srv = &http.Server{Handler: mux}
	go func() { _ = f.srv.Serve(l) }()
	return nil
}

func (f *FakeExtender) Stop(kill bool) error {
	if f.srv == nil {
		return nil
	}
	var err error
	if kill {
		err = f.srv.Close()
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = f.srv.Shutdown(ctx)
	}
	f.srv = nil
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func argNodeNames(a *extenderv1.ExtenderArgs) []string {
	if a.NodeNames != nil {
		return *a.NodeNames
	}
	var names []string
	if a.Nodes != nil {
		for _, n := range a.Nodes.Items {
			names = append(names, n.Name)
		}
	}
	return names
}

func (f *FakeExtender) filter(w http.ResponseWriter, r *http.Request) {
	f.count("filter")
	var args extenderv1.ExtenderArgs
	if !decode(w, r, &args) {
		return
	}
	res := extenderv1.ExtenderFilterResult{FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{}}
	keep := []string{}
	for _, n := range argNodeNames(&args) {
		ok, reason := true, ""
		if f.Filter != nil {
			ok, reason = f.Filter(args.Pod, n)
		}
		if ok {
			keep = append(keep, n)
		} else {
			res.FailedAndUnresolvableNodes[n] = reason
		}
	}
	if args.NodeNames != nil {
		res.NodeNames = &keep
	} else {
		list := &corev1.NodeList{}
		for _, n := range args.Nodes.Items {
			for _, k := range keep {
				if n.Name == k {
					list.Items = append(list.Items, n)
				}
			}
		}
		res.Nodes = list
	}
	reply(w, &res)
}

func (f *FakeExtender) prioritize(w http.ResponseWriter, r *http.Request) {
	f.count("prioritize")
	var args extenderv1.ExtenderArgs
	if !decode(w, r, &args) {
		return
	}
	list := extenderv1.HostPriorityList{}
	for _, n := range argNodeNames(&args) {
		var s int64
		if f.Score != nil {
			s = f.Score(args.Pod, n)
		}
		list = append(list, extenderv1.HostPriority{Host: n, Score: s})
	}
	reply(w, list)
}

func (f *FakeExtender) bind(w http.ResponseWriter, r *http.Request) {
	f.count("bind")
	var args extenderv1.ExtenderBindingArgs
	if !decode(w, r, &args) {
		return
	}
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: args.PodName, Namespace: args.PodNamespace, UID: args.PodUID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: args.Node},
	}
	res := extenderv1.ExtenderBindingResult{}
	if err := f.client.CoreV1().Pods(args.PodNamespace).Bind(r.Context(), b, metav1.CreateOptions{}); err != nil {
		res.Error = err.Error()
	} else {
		f.mu.Lock()
		if f.binds == nil {
			f.binds = map[string]string{}
		}
		f.binds[args.PodNamespace+"/"+args.PodName] = args.Node
		f.mu.Unlock()
	}
	reply(w, &res)
}

func (f *FakeExtender) preempt(w http.ResponseWriter, r *http.Request) {
	f.count("preempt")
	var args extenderv1.ExtenderPreemptionArgs
	if !decode(w, r, &args) {
		return
	}
	// Accept the scheduler's candidates as they are.
	res := extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: args.NodeNameToMetaVictims}
	if res.NodeNameToMetaVictims == nil {
		res.NodeNameToMetaVictims = map[string]*extenderv1.MetaVictims{}
		for n, v := range args.NodeNameToVictims {
			mv := &extenderv1.MetaVictims{NumPDBViolations: v.NumPDBViolations}
			for _, p := range v.Pods {
				mv.Pods = append(mv.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
			}
			res.NodeNameToMetaVictims[n] = mv
		}
	}
	reply(w, &res)
}
