package tests

import (
	"context"
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
)

// `topofit agent` against the real kube-apiserver, for a fake node, with the stand-in nvidia-smi
// (extender/node/testdata/fake-nvidia-smi) printing a shared fixture: it publishes the topology,
// skips an unchanged node, reports garbage as a TopologyParseError event without erasing, and
// topofit serve places a `required` 4-GPU pod by the published NVLink topology.
// Skipped while $TOPOFIT_BINARY lacks `serve --kubeconfig` or `agent --once`.

const (
	annotationUUIDs = "topofit.io/gpu-uuids"
	annotationHash  = "topofit.io/gpu-topology-hash"
)

// runAgent runs one pass of the agent for node with the stand-in nvidia-smi in the given mode.
func runAgent(t *testing.T, c *harness.Cluster, bin, node, fixture, mode string) (string, error) {
	t.Helper()
	root := filepath.Join(harness.ModuleRoot(), "..", "..")
	fixtures := os.Getenv("TOPOFIT_FIXTURES_DIR")
	if fixtures == "" {
		fixtures = filepath.Join(root, "..", "shared", "fixtures")
	}
	cmd := exec.Command(bin, "agent", "--once", "--node-name", node,
		"--kubeconfig", c.Kubeconfig("topofit"),
		"--nvidia-smi", filepath.Join(root, "extender", "node", "testdata", "fake-nvidia-smi"))
	cmd.Env = append(os.Environ(), "FAKE_SMI_TOPO="+filepath.Join(fixtures, "topo", fixture), "FAKE_SMI_MODE="+mode)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestTopofitAgentPublishesTopology(t *testing.T) {
	bin := harness.TopofitBinary(t)
	ctx := context.Background()
	c, _ := startTopofit(t,
		harness.GPUNode("agent-node", 8, ""), // no topology until the agent publishes it
		harness.GPUNode("pcie", 8, "pcie-8-dual-socket"),
	)
	nodes := c.Client.CoreV1().Nodes()

	out, err := runAgent(t, c, bin, "agent-node", "dgx1-v100-hybrid-cube-mesh.txt", "ok")
	if err != nil {
		t.Fatalf("agent --once: %v\n%s", err, out)
	}
	n, err := nodes.Get(ctx, "agent-node", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hash := n.Annotations[annotationHash]
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(hash) ||
		!strings.Contains(n.Annotations[harness.AnnotationTopology], "NV2") ||
		strings.Count(n.Annotations[annotationUUIDs], "GPU-") != 8 {
		t.Fatalf("agent-node annotations after the agent: %v", n.Annotations)
	}

	// Unchanged content: no write at all.
	if out, err := runAgent(t, c, bin, "agent-node", "dgx1-v100-hybrid-cube-mesh.txt", "ok"); err != nil {
		t.Fatalf("second agent --once: %v\n%s", err, out)
	}
	again, _ := nodes.Get(ctx, "agent-node", metav1.GetOptions{})
	if again.ResourceVersion != n.ResourceVersion {
		t.Errorf("unchanged topology re-written: resourceVersion %s -> %s", n.ResourceVersion, again.ResourceVersion)
	}

	// Garbage: exit 1, a TopologyParseError event with the parser's position, annotation kept.
	if out, err := runAgent(t, c, bin, "agent-node", "dgx1-v100-hybrid-cube-mesh.txt", "garbage"); err == nil {
		t.Fatalf("agent accepted garbage:\n%s", out)
	}
	kept, _ := nodes.Get(ctx, "agent-node", metav1.GetOptions{})
	if kept.Annotations[annotationHash] != hash {
		t.Errorf("garbage changed the published hash to %q", kept.Annotations[annotationHash])
	}
	var found *corev1.Event
	for deadline := time.Now().Add(10 * time.Second); found == nil && time.Now().Before(deadline); {
		evs, err := c.Client.CoreV1().Events("default").List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Node,involvedObject.name=agent-node"})
		if err == nil {
			for i := range evs.Items {
				if evs.Items[i].Reason == "TopologyParseError" {
					found = &evs.Items[i]
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if found == nil || !strings.Contains(found.Message, "line ") {
		t.Fatalf("no TopologyParseError event with a position on agent-node (got %v)", found)
	}

	// topofit serve reads the published matrix: 4 NVLink-connected GPUs exist only on agent-node.
	time.Sleep(500 * time.Millisecond)
	spec := harness.GPUPod("train4", 4)
	spec.Annotations = map[string]string{harness.AnnotationPolicy: "required"}
	mustCreate(t, c, spec)
	node, ids := scheduled(t, c, "train4", 4, 8)
	if node != "agent-node" {
		t.Fatalf("required 4-GPU pod went to %s %v, want agent-node (NVLink, published by the agent)", node, ids)
	}
}
