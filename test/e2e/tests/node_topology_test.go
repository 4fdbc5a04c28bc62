package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/skip"
)

// `topofit node`'s topology publishing against the real kube-apiserver, for a fake node without a
// kubelet (its sockets in a temporary directory, no PodResources), with the stand-in nvidia-smi
// (extender/node/testdata/fake-nvidia-smi) printing a shared fixture: it publishes the topology,
// leaves an unchanged node alone, reports garbage as a TopologyParseError event without erasing, and
// topofit serve places a `required` 4-GPU pod by the published NVLink topology.
// Skipped while $TOPOFIT_BINARY lacks `serve --kubeconfig` or `node --nvidia-smi`.

const (
	annotationUUIDs = "topofit.io/gpu-uuids"
	annotationHash  = "topofit.io/gpu-topology-hash"
)

// startTopologyPublishing runs `topofit node` for node with the stand-in nvidia-smi in the given mode
// (ok, fail, garbage), checking the topology every 200 ms; stopped at the end of the test.
func startTopologyPublishing(t *testing.T, c *harness.Cluster, bin, node, fixture, mode string) *harness.Process {
	t.Helper()
	root := filepath.Join(harness.ModuleRoot(), "..", "..")
	fixtures := os.Getenv("TOPOFIT_FIXTURES_DIR")
	if fixtures == "" {
		fixtures = filepath.Join(root, "..", "shared", "fixtures")
	}
	smi, _ := filepath.Abs(filepath.Join(root, "extender", "node", "testdata", "fake-nvidia-smi"))
	topo, _ := filepath.Abs(filepath.Join(fixtures, "topo", fixture))
	p := &harness.Process{Name: "topofit-node", Path: bin, LogPath: filepath.Join(c.Dir, "topofit-node-"+mode+".log"),
		Args: []string{"node", "--node-name", node, "--kubeconfig", c.Kubeconfig("topofit"),
			"--device-plugin-dir", t.TempDir(), "--pod-resources-socket", "",
			"--nvidia-smi", smi, "--topology-interval", "200ms"},
		Env: []string{"FAKE_SMI_TOPO=" + topo, "FAKE_SMI_MODE=" + mode}}
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	return p
}

// nodeEvent waits up to 10 s for an event with the given reason on the node.
func nodeEvent(t *testing.T, c *harness.Cluster, node, reason string) *corev1.Event {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		evs, err := c.Client.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + node})
		if err != nil {
			continue
		}
		for i := range evs.Items {
			if evs.Items[i].Reason == reason {
				return &evs.Items[i]
			}
		}
	}
	return nil
}

func TestTopofitNodePublishesTopology(t *testing.T) {
	bin := harness.TopofitBinary(t)
	if out, _ := exec.Command(bin, "node", "--help").CombinedOutput(); !strings.Contains(string(out), "--nvidia-smi") {
		skip.OrFail(t, fmt.Sprintf("`%s node --help` lacks --nvidia-smi", bin))
	}
	ctx := context.Background()
	c, _ := startTopofit(t,
		harness.GPUNode("gpu-node", 8, ""), // no topology until topofit node publishes it
		harness.GPUNode("pcie", 8, "pcie-8-dual-socket"),
	)
	nodes := c.Client.CoreV1().Nodes()

	p := startTopologyPublishing(t, c, bin, "gpu-node", "dgx1-v100-hybrid-cube-mesh.txt", "ok")
	var n *corev1.Node
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, err := nodes.Get(ctx, "gpu-node", metav1.GetOptions{})
		if err == nil && got.Annotations[annotationHash] != "" {
			n = got
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no topology published within 20 s\n%s", harness.TailFile(p.LogPath, 20))
		}
	}
	hash := n.Annotations[annotationHash]
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(hash) ||
		!strings.Contains(n.Annotations[harness.AnnotationTopology], "NV2") ||
		strings.Count(n.Annotations[annotationUUIDs], "GPU-") != 8 {
		t.Fatalf("gpu-node annotations after topofit node: %v", n.Annotations)
	}
	if ev := nodeEvent(t, c, "gpu-node", "TopologyPublished"); ev == nil || ev.Type != corev1.EventTypeNormal {
		t.Errorf("no Normal TopologyPublished event on gpu-node (got %v)", ev)
	}

	// Unchanged content: no write at all, over several checks.
	time.Sleep(time.Second)
	again, _ := nodes.Get(ctx, "gpu-node", metav1.GetOptions{})
	if again.ResourceVersion != n.ResourceVersion {
		t.Errorf("unchanged topology re-written: resourceVersion %s -> %s", n.ResourceVersion, again.ResourceVersion)
	}
	_ = p.Stop(5 * time.Second)

	// Garbage: a TopologyParseError event with the parser's position, the annotation kept.
	startTopologyPublishing(t, c, bin, "gpu-node", "dgx1-v100-hybrid-cube-mesh.txt", "garbage")
	found := nodeEvent(t, c, "gpu-node", "TopologyParseError")
	if found == nil || !strings.Contains(found.Message, "line ") {
		t.Fatalf("no TopologyParseError event with a position on gpu-node (got %v)", found)
	}
	kept, _ := nodes.Get(ctx, "gpu-node", metav1.GetOptions{})
	if kept.Annotations[annotationHash] != hash {
		t.Errorf("garbage changed the published hash to %q", kept.Annotations[annotationHash])
	}

	// topofit serve reads the published matrix: 4 NVLink-connected GPUs exist only on gpu-node.
	time.Sleep(500 * time.Millisecond)
	spec := harness.GPUPod("train4", 4)
	spec.Annotations = map[string]string{harness.AnnotationPolicy: "required"}
	mustCreate(t, c, spec)
	node, ids := scheduled(t, c, "train4", 4, 8)
	if node != "gpu-node" {
		t.Fatalf("required 4-GPU pod went to %s %v, want gpu-node (NVLink, published by topofit node)", node, ids)
	}
}
