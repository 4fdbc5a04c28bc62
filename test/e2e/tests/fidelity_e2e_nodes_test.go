package tests

// TestFidelityEndToEnd's side of its fake nodes: starting them (fidelity_e2e_node_test.go is the node
// process), asking them for kubelet's truth, and comparing topofit's model with it.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

// ---------------------------------------------------------------------------------------------
// The fake nodes (child processes) and what they answer.

type fakeNode struct {
	name string
	ids  []string
	url  string
	log  string
}

// startFakeNode starts one fake node: this test binary, TestNodesimChildProcess, under
// `unshare --mount --propagation private` (nodesim.Hermetic mounts its tmpfs there). It returns
// once the node's kubelet counts its GPUs through topofit node and the control API answers.
func startFakeNode(t *testing.T, c *harness.Cluster, bin, name, fixture string) *fakeNode {
	t.Helper()
	port, err := harness.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(harness.ModuleRoot(), "..", "..")
	fixtures := os.Getenv("TOPOFIT_FIXTURES_DIR")
	if fixtures == "" {
		fixtures = filepath.Join(root, "..", "shared", "fixtures")
	}
	smi, _ := filepath.Abs(filepath.Join(root, "extender", "node", "testdata", "fake-nvidia-smi"))
	topo, _ := filepath.Abs(filepath.Join(fixtures, "topo", fixture))
	if _, err := os.Stat(topo); err != nil {
		t.Fatalf("topology fixture: %v", err)
	}
	n := &fakeNode{name: name, ids: smiUUIDs(name, e2eGPUs), url: fmt.Sprintf("http://127.0.0.1:%d", port),
		log: filepath.Join(c.Dir, "node-"+name+".log")}
	spec := fakeNodeSpec{Node: name, Kubeconfig: c.Kubeconfig("admin"), TopofitKubeconfig: c.Kubeconfig("topofit"),
		Binary: bin, Listen: fmt.Sprintf("127.0.0.1:%d", port), IDs: n.ids, Topo: topo, SMI: smi, LogDir: c.Dir}
	raw, _ := json.Marshal(spec)
	unshare, _ := exec.LookPath("unshare")
	cmd := exec.Command(unshare, "--mount", "--propagation", "private", os.Args[0],
		"-test.run", "^TestNodesimChildProcess$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TOPOFIT_NODESIM_IN_NAMESPACE=1", fakeNodeEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	logf, err := os.Create(n.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		stdin.Close() // the node stops topofit node and its kubelet, then exits
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("---- tail of %s ----\n%s", n.log, harness.TailFile(n.log, 15))
			tl := filepath.Join(c.Dir, "topofit-node-"+name+".log")
			t.Logf("---- tail of %s ----\n%s", tl, harness.TailFile(tl, 15))
		}
	})
	for deadline := time.Now().Add(90 * time.Second); ; {
		if res, err := http.Get(n.url + "/ready"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return n
			}
		}
		select {
		case <-done:
			t.Fatalf("fake node %s exited before it was ready:\n%s", name, harness.TailFile(n.log, 30))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake node %s not ready after 90 s:\n%s", name, harness.TailFile(n.log, 30))
		}
	}
}

func (n *fakeNode) call(method, path string, into any) error {
	req, err := http.NewRequest(method, n.url+path, nil)
	if err != nil {
		return err
	}
	res, err := (&http.Client{Timeout: 20 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s on node %s: %s: %s", method, path, n.name, res.Status, strings.TrimSpace(string(body)))
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(body, into)
}

func (e *e2eRun) truth(n *fakeNode, containers bool) *nodeTruth {
	e.t.Helper()
	var tr nodeTruth
	q := "/truth"
	if containers {
		q += "?containers=1"
	}
	if err := n.call("GET", q, &tr); err != nil {
		e.t.Fatal(err)
	}
	return &tr
}

func (e *e2eRun) admissions(n *fakeNode) []nodesim.Admission {
	e.t.Helper()
	var out []nodesim.Admission
	if err := n.call("GET", "/admissions", &out); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func (e *e2eRun) node(name string) *fakeNode {
	for _, n := range e.nodes {
		if n.name == name {
			return n
		}
	}
	e.t.Fatalf("no fake node %q", name)
	return nil
}

// waitNodesPublished waits until topofit's model has every node with its 8 GPUs by the stub's UUIDs,
// all free, and the node reports health (topofit node's first reconcile).
func (e *e2eRun) waitNodesPublished() {
	e.t.Helper()
	var last string
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		last = ""
		for _, n := range e.nodes {
			node, err := e.c.Client.CoreV1().Nodes().Get(e.ctx, n.name, metav1.GetOptions{})
			if err != nil {
				last = err.Error()
				break
			}
			if _, ok := node.Annotations[annotationHealth]; !ok {
				last = n.name + ": no " + annotationHealth + " yet"
				break
			}
			if d := e.diff(n, &nodeTruth{}); d != "" {
				last = d
				break
			}
		}
		if last == "" {
			return
		}
	}
	e.t.Fatalf("topofit's model never showed the fake nodes as published: %s", last)
}

// ---------------------------------------------------------------------------------------------
// topofit's model against kubelet's truth.

// diff is "" when topofit's model of node n (its query API) equals kubelet's truth tr, else the
// first difference. Per GPU: unhealthy in kubelet -> unhealthy (with kubelet's holder, if any);
// held by a container -> in-use (foreign for a pod topofit did not place) by that pod and container,
// not guessed; else free, or planned for a pod kubelet has not been given yet.
func (e *e2eRun) diff(n *fakeNode, tr *nodeTruth) string {
	states, err := gpuStates(e.c, n.name)
	if err != nil {
		return fmt.Sprintf("%s: query API: %v", n.name, err)
	}
	if len(states) != len(n.ids) {
		return fmt.Sprintf("%s: %d GPUs in the model, kubelet has %d", n.name, len(states), len(n.ids))
	}
	type holder struct{ pod, container string }
	held := map[string]holder{}
	for key, ids := range tr.Holdings {
		i := strings.LastIndex(key, "/")
		for _, id := range ids {
			held[id] = holder{key[:i], key[i+1:]}
		}
	}
	unhealthy := map[string]bool{}
	for _, id := range tr.Unhealthy {
		unhealthy[id] = true
	}
	given := map[string]bool{}
	for _, a := range tr.Admissions {
		given[a.Namespace+"/"+a.Name] = true
	}
	for i, s := range states {
		if s.UUID != n.ids[i] {
			return fmt.Sprintf("%s GPU %d: UUID %q in the model, %q on the node", n.name, i, s.UUID, n.ids[i])
		}
		h, isHeld := held[s.UUID]
		bad := ""
		switch {
		case unhealthy[s.UUID]:
			if s.State != "unhealthy" || (isHeld && s.Pod != h.pod) {
				bad = fmt.Sprintf("kubelet: unhealthy (holder %q)", h.pod)
			}
		case isHeld:
			want := "in-use"
			if e.foreign[h.pod] {
				want = "foreign"
			}
			if s.State != want || s.Pod != h.pod || s.Container != h.container || s.Guessed {
				bad = fmt.Sprintf("kubelet: %s by %s/%s", want, h.pod, h.container)
			}
		default:
			if s.State != "free" && !(s.State == "planned" && !given[s.Pod]) {
				bad = "kubelet: free"
			}
		}
		if bad != "" {
			return fmt.Sprintf("%s GPU %d (%s): model %s pod %q container %q guessed %v; %s",
				n.name, i, s.UUID, s.State, s.Pod, s.Container, s.Guessed, bad)
		}
	}
	return ""
}

// follow polls topofit's query API until its model of n equals tr; it returns the time from `since`
// (the deviation on the node) to the first answer that did. Past e2eConverge it fails the test.
func (e *e2eRun) follow(n *fakeNode, tr *nodeTruth, since time.Time, what string) time.Duration {
	e.t.Helper()
	var last string
	for {
		d := e.diff(n, tr)
		now := time.Now()
		if d == "" {
			return now.Sub(since)
		}
		last = d
		if now.Sub(since) > e2eConverge {
			e.t.Fatalf("%s: topofit's model did not follow kubelet within %v: %s", what, e2eConverge, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settle waits until every node's model equals kubelet's truth (read afresh each time).
func (e *e2eRun) settle(what string) {
	e.t.Helper()
	for _, n := range e.nodes {
		start := time.Now()
		var last string
		for {
			if last = e.diff(n, e.truth(n, false)); last == "" {
				break
			}
			if time.Since(start) > e2eConverge {
				e.t.Fatalf("%s: node %s: topofit's model != kubelet's after %v: %s", what, n.name, e2eConverge, last)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
