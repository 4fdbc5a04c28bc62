// Command fake-topofit is a stand-in for `topofit serve` with the same command line
// (`serve --kubeconfig K --listen ADDR`) and the same contract as far as the e2e scenarios can see:
// it reads node topology from topofit.io/gpu-topology (built-in profile names) or GFD labels, picks
// the GPU set of the most NVLinks, records it in topofit.io/gpu-ids and binds; its state is the pods'
// annotations, re-read from the apiserver on every call. It exists to prove tests/topofit_test.go
// and the harness before the real `topofit serve` speaks Kubernetes:
//
//	go build -o /tmp/fake-topofit ./tools/fake-topofit
//	TOPOFIT_BINARY=/tmp/fake-topofit ./run.sh -run TestTopofit
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"topofit.dev/e2e/harness"
)

const usage = `usage: fake-topofit serve --kubeconfig FILE --listen ADDR:PORT [--filter-keeps-best]
  --kubeconfig FILE      kubeconfig of the cluster
  --listen ADDR:PORT     where the scheduler calls /scheduler/{filter,prioritize,bind}
  --filter-keeps-best    filter passes only the nodes of the best prioritize score, as topofit's does
`

type server struct {
	client    kubernetes.Interface
	keepsBest bool
	mu        sync.Mutex // binds one at a time: each sees the previous one's annotation
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	kubeconfig := fs.String("kubeconfig", "", "")
	listen := fs.String("listen", "127.0.0.1:8888", "")
	keepsBest := fs.Bool("filter-keeps-best", false, "")
	_ = fs.Parse(os.Args[2:])
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // client-go's default 5 QPS would make every call take a second
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{client: client, keepsBest: *keepsBest}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /scheduler/filter", s.filter)
	mux.HandleFunc("POST /scheduler/prioritize", s.prioritize)
	mux.HandleFunc("POST /scheduler/bind", s.bind)
	log.Printf("fake-topofit listening on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, mux))
}

func gpuRequest(p *corev1.Pod) int {
	n := int64(0)
	for _, c := range p.Spec.Containers {
		if q, ok := c.Resources.Limits[harness.GPUResource]; ok {
			n += q.Value()
		}
	}
	return int(n)
}

// nodeState: the node's NVLink matrix and which GPUs live pods hold.
type nodeState struct {
	links [][]int
	free  []int
}

func (s *server) state(ctx context.Context, name string) (*nodeState, error) {
	node, err := s.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	q := node.Status.Allocatable[harness.GPUResource]
	n := int(q.Value())
	profile := node.Annotations[harness.AnnotationTopology]
	if profile == "" {
		product := node.Labels[harness.LabelGPUProduct]
		switch {
		case strings.Contains(product, "A100") && n == 8:
			profile = "hgx-a100-8"
		case strings.Contains(product, "V100") && n == 8:
			profile = "dgx1-v100"
		}
	}
	links, ok := harness.NVLinkMatrix(profile)
	if !ok || len(links) != n {
		links = make([][]int, n) // unknown: no NVLink anywhere
		for i := range links {
			links[i] = make([]int, n)
		}
	}
	pods, err := s.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return nil, err
	}
	used := map[int]bool{}
	for _, p := range pods.Items {
		for _, f := range strings.Split(p.Annotations[harness.AnnotationGPUIDs], ",") {
			if id, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				used[id] = true
			}
		}
	}
	st := &nodeState{links: links}
	for i := 0; i < n; i++ {
		if !used[i] {
			st.free = append(st.free, i)
		}
	}
	return st, nil
}

// best returns the k-subset of free GPUs with the most NVLinks among its pairs (lowest indices on
// ties) and that count; connectedOnly keeps sets whose every pair has an NVLink.
func (st *nodeState) best(k int, connectedOnly bool) ([]int, int, bool) {
	var bestSet []int
	bestSum := -1
	f := st.free
	for mask := 0; mask < 1<<len(f); mask++ {
		var set []int
		for i := range f {
			if mask&(1<<i) != 0 {
				set = append(set, f[i])
			}
		}
		if len(set) != k {
			continue
		}
		sum, connected := 0, true
		for i := range set {
			for j := i + 1; j < len(set); j++ {
				l := st.links[set[i]][set[j]]
				sum += l
				connected = connected && l > 0
			}
		}
		if connectedOnly && !connected {
			continue
		}
		if sum > bestSum || (sum == bestSum && less(set, bestSet)) {
			bestSet, bestSum = set, sum
		}
	}
	return bestSet, bestSum, bestSet != nil
}

func less(a, b []int) bool {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i < len(b) && a[i] < b[i]
		}
	}
	return false
}

func required(p *corev1.Pod) bool { return p.Annotations[harness.AnnotationPolicy] == "required" }

func names(a *extenderv1.ExtenderArgs) []string {
	if a.NodeNames != nil {
		return *a.NodeNames
	}
	var out []string
	if a.Nodes != nil {
		for _, n := range a.Nodes.Items {
			out = append(out, n.Name)
		}
	}
	return out
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *server) filter(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	k := gpuRequest(args.Pod)
	keep := []string{}
	failed := extenderv1.FailedNodesMap{}
	for _, n := range names(&args) {
		st, err := s.state(r.Context(), n)
		switch {
		case err != nil:
			failed[n] = "topofit: " + err.Error()
		case len(st.free) < k:
			failed[n] = fmt.Sprintf("topofit: %d free GPUs, pod needs %d", len(st.free), k)
		default:
			if _, _, ok := st.best(k, required(args.Pod)); !ok {
				failed[n] = fmt.Sprintf("topofit: no NVLink-connected set of %d free GPUs (topology-policy: required)", k)
			} else {
				keep = append(keep, n)
			}
		}
	}
	resolvable := extenderv1.FailedNodesMap{}
	if s.keepsBest && len(keep) > 1 {
		best := int64(-1)
		scores := map[string]int64{}
		for _, n := range keep {
			scores[n] = s.score(r.Context(), n, k)
			if scores[n] > best {
				best = scores[n]
			}
		}
		kept := []string{}
		for _, n := range keep {
			if scores[n] == best {
				kept = append(kept, n)
			} else {
				resolvable[n] = fmt.Sprintf("another node fits better: score %d, best %d", scores[n], best)
			}
		}
		keep = kept
	}
	reply(w, &extenderv1.ExtenderFilterResult{NodeNames: &keep, FailedNodes: resolvable, FailedAndUnresolvableNodes: failed})
}

// score is prioritize's score of node n for a pod of k GPUs: the best set's summed link points, at most 10.
func (s *server) score(ctx context.Context, n string, k int) int64 {
	score := int64(0)
	if st, err := s.state(ctx, n); err == nil {
		if _, sum, ok := st.best(k, false); ok && k > 1 {
			score = int64(sum)
			if score > 10 {
				score = 10
			}
		}
	}
	return score
}

func (s *server) prioritize(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	k := gpuRequest(args.Pod)
	list := extenderv1.HostPriorityList{}
	for _, n := range names(&args) {
		list = append(list, extenderv1.HostPriority{Host: n, Score: s.score(r.Context(), n, k)})
	}
	reply(w, list)
}

func (s *server) bind(w http.ResponseWriter, r *http.Request) {
	var args extenderv1.ExtenderBindingArgs
	if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	res := extenderv1.ExtenderBindingResult{}
	if err := s.doBind(r.Context(), &args); err != nil {
		res.Error = err.Error()
	}
	reply(w, &res)
}

func (s *server) doBind(ctx context.Context, a *extenderv1.ExtenderBindingArgs) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	pods := s.client.CoreV1().Pods(a.PodNamespace)
	pod, err := pods.Get(ctx, a.PodName, metav1.GetOptions{})
	if err != nil {
		return err
	}
	st, err := s.state(ctx, a.Node)
	if err != nil {
		return err
	}
	set, _, ok := st.best(gpuRequest(pod), required(pod))
	if !ok {
		return fmt.Errorf("topofit: no GPU set left on %s", a.Node)
	}
	sort.Ints(set)
	ids := make([]string, len(set))
	for i, id := range set {
		ids[i] = strconv.Itoa(id)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{harness.AnnotationGPUIDs: strings.Join(ids, ",")}}})
	if _, err := pods.Patch(ctx, a.PodName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return err
	}
	return pods.Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: a.PodName, Namespace: a.PodNamespace, UID: a.PodUID},
		Target:     corev1.ObjectReference{Kind: "Node", Name: a.Node},
	}, metav1.CreateOptions{})
}
