package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
)

// TestTopofitGroupsNominated: a group whose rack kube-scheduler's search does not reach
// (docs/groups.md, "The mechanism", steps 7 and 8). 300 fake 8-GPU nodes, percentageOfNodesToScore 1:
// kube-scheduler stops once it has found 100 feasible nodes (its minFeasibleNodesToFind), starting
// where its last search stopped. 298 nodes carry no rack label (each a rack of its own, too small for
// the group); the two of rack rz, created last, are the only place the group fits, and the searches of
// its first attempts (nodes 0-99, then 100-199) do not reach them. topofit plans the group on rz, sees
// its slot node missing from a list of 100 (which proves nothing), sets the member's
// status.nominatedNodeName to the slot's node and requeues it; kube-scheduler then judges that node
// first, and the members bind there within seconds.
func TestTopofitGroupsNominated(t *testing.T) {
	ctx := context.Background()
	cfgPath := filepath.Join(t.TempDir(), "scheduler-config.yaml")
	writeSchedulerConfig(t, cfgPath, func(cfg map[string]any) { cfg["percentageOfNodesToScore"] = 1 })
	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t)}
	c := harness.Start(t, harness.Options{SchedulerConfig: cfgPath, Extender: ext})

	const fillers = 298
	specs := make([]harness.NodeSpec, fillers)
	for i := range specs {
		specs[i] = harness.GPUNode(fmt.Sprintf("n%03d", i), 8, "hgx-h100-8")
	}
	parallel(t, len(specs), 16, func(i int) error { _, err := c.CreateNode(ctx, specs[i]); return err })
	for i := 1; i <= 2; i++ {
		spec := harness.GPUNode(fmt.Sprintf("rz-n%d", i), 8, "hgx-h100-8")
		spec.Labels = map[string]string{"nvidia.com/gpu.clique": "rz"}
		c.CreateNodes(ctx, spec)
	}
	waitTopofitNodes(t, c, fillers+2)

	start := time.Now()
	for i := 0; i < 2; i++ {
		mustCreate(t, c, rackMember(fmt.Sprintf("z-%d", i), "gz", 2))
	}
	for i := 0; i < 2; i++ {
		node, _ := scheduled(t, c, fmt.Sprintf("z-%d", i), 8, 8)
		if !strings.HasPrefix(node, "rz-") {
			t.Errorf("member z-%d on %s, want a node of rack rz", i, node)
		}
	}
	t.Logf("both members bound %.1f s after their creation", time.Since(start).Seconds())
	// A nomination may come after its member was bound (the API server then refuses it, and topofit
	// logs "nomination not needed"); at least one must have landed for the first bind to happen.
	nominated := harness.GrepFile(c.Dir+"/extender.log", `msg="nominated"`)
	if len(nominated) == 0 {
		t.Errorf("no member was nominated to its slot's node (kube-scheduler's searches of 100 nodes could not reach rack rz)")
	}
	for _, l := range nominated {
		t.Logf("%s", l)
	}
	for _, l := range harness.GrepFile(c.Dir+"/extender.log", "API write failed") {
		if strings.Contains(l, "nominate pod") {
			t.Errorf("a nomination failed: %s", l)
		}
	}
}
