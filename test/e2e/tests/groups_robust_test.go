package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// The robustness steps of TestTopofitGroups (docs/groups.md, "The mechanism"), on two racks added
// after its first steps: r4 (two 8-GPU nodes) and r5 (three).
//   - topofit is killed (SIGKILL) after two members of a four-member group (min-count 2) are bound in
//     r4 and restarted: the two created meanwhile wait with the failed call as their reason, then bind
//     in r4 beside the bound ones (a plan from scratch would take r1's free node, partly used, first);
//     no member lost or bound twice, no GPU given twice, topofit's model equal to the pods' annotations;
//   - a member's slot node is tainted NoSchedule before the member exists: kube-scheduler does not send
//     that node, topofit plans the group again at once without it - the member binds on r5's third node
//     within seconds, not after the reservation's 60 s TTL - and GET /api/v1/groups says why.
func groupsRobustness(t *testing.T, c *harness.Cluster, ext *harness.TopofitExtender) {
	ctx := context.Background()
	var racks []harness.NodeSpec
	for r, n := range map[int]int{4: 2, 5: 3} {
		for i := 1; i <= n; i++ {
			racks = append(racks, rackNode(r, i))
		}
	}
	c.CreateNodes(ctx, racks...)
	time.Sleep(500 * time.Millisecond)
	groupSurvivesKill(t, c, ext)
	refusedSlotReplanned(t, c, ext)
}

// robustMember: a member of `group` asking `gpus` GPUs, required in one NVLink rack.
func robustMember(name, group string, gpus, size, minCount int) harness.PodSpec {
	spec := harness.GPUPod(name, gpus)
	spec.Annotations = map[string]string{"topofit.io/group": group, "topofit.io/group-size": fmt.Sprint(size),
		"topofit.io/group-min-count": fmt.Sprint(minCount), "topofit.io/group-level": "accelerator",
		"topofit.io/group-policy": "required"}
	return spec
}

func groupSurvivesKill(t *testing.T, c *harness.Cluster, ext *harness.TopofitExtender) {
	ctx := context.Background()
	// Four members of 4 GPUs, two to start: only r4 and r5 hold four; r4 is the best fit.
	for i := 0; i < 2; i++ {
		mustCreate(t, c, robustMember(fmt.Sprintf("k-%d", i), "gk", 4, 4, 2))
	}
	for i := 0; i < 2; i++ {
		if node, _ := scheduled(t, c, fmt.Sprintf("k-%d", i), 4, 8); !strings.HasPrefix(node, "r4-") {
			t.Fatalf("k-%d on %s, want rack r4", i, node)
		}
	}
	if err := ext.Stop(true); err != nil {
		t.Fatal(err)
	}
	downAt := time.Now()
	// The other two arrive while topofit is down: their slots died with it. Planned from scratch, two
	// members of 4 GPUs would go to r1 (partly used, room for two, first by name); beside the bound
	// ones they go to r4.
	for _, name := range []string{"k-2", "k-3"} {
		mustCreate(t, c, robustMember(name, "gk", 4, 4, 2))
		ev, err := c.WaitForFailedScheduling(ctx, name, 30*time.Second, c.ExtenderAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s's FailedScheduling while topofit is down: %s", name, ev.Message)
	}
	if err := ext.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	restartedAt := time.Now()
	nodes := map[string]int{}
	for i := 0; i < 4; i++ {
		node, _ := scheduled(t, c, fmt.Sprintf("k-%d", i), 4, 8)
		nodes[node]++
		if !strings.HasPrefix(node, "r4-") {
			t.Errorf("k-%d on %s after the restart, want rack r4 with the others", i, node)
		}
	}
	t.Logf("topofit down %.1f s; group gk whole %.1f s after the restart: %v",
		restartedAt.Sub(downAt).Seconds(), time.Since(restartedAt).Seconds(), nodes)
	bound, total := boundPods(t, c)
	members := 0
	for name := range bound {
		if strings.HasPrefix(name, "k-") {
			members++
		}
	}
	if members != 4 {
		t.Errorf("%d members of gk bound, want 4", members)
	}
	// Every bound pod's GPUs are distinct (holdings), and topofit's model says the same.
	want := holdings(t, bound, 8)
	waitModelEquals(t, c.ExtenderAddr, want, 11, 8)
	t.Logf("%d pods, %d bound", total, len(bound))
}

func refusedSlotReplanned(t *testing.T, c *harness.Cluster, ext *harness.TopofitExtender) {
	ctx := context.Background()
	// Two members of 8 GPUs, min-count 1: t-0 alone is planned with both slots, in r5 (the only rack
	// left with two free nodes), and binds.
	mustCreate(t, c, robustMember("t-0", "gt", 8, 2, 1))
	bound0, _ := scheduled(t, c, "t-0", 8, 8)
	slot := otherSlotNode(t, c, "t-0", bound0)
	if !strings.HasPrefix(bound0, "r5-") || !strings.HasPrefix(slot, "r5-") {
		t.Fatalf("group gt: t-0 on %s and the other slot on %s, want rack r5", bound0, slot)
	}
	node, err := c.Client.CoreV1().Nodes().Get(ctx, slot, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "e2e/drain", Effect: corev1.TaintEffectNoSchedule})
	if _, err := c.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // kube-scheduler's informer sees the taint
	createdAt := time.Now()
	mustCreate(t, c, robustMember("t-1", "gt", 8, 2, 1))
	p, err := c.WaitForPod(ctx, "t-1", 20*time.Second, "bound well before the group's 60 s TTL",
		func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("t-1 bound to %s %.1f s after it was created (its slot node %s tainted)", p.Spec.NodeName,
		time.Since(createdAt).Seconds(), slot)
	if p.Spec.NodeName == slot || p.Spec.NodeName == bound0 || !strings.HasPrefix(p.Spec.NodeName, "r5-") {
		t.Errorf("t-1 on %s: want r5's third node (not the tainted %s nor t-0's %s)", p.Spec.NodeName, slot, bound0)
	}
	if lines := harness.GrepFile(ext.LogPath(), "refused_slot_node="+slot); len(lines) != 1 {
		t.Errorf("topofit logged the re-plan around %s %d times, want once:\n%s", slot, len(lines), strings.Join(lines, "\n"))
	}
	var body struct {
		Groups []struct {
			Name  string
			Notes []string
		}
	}
	if err := getJSON("http://"+c.ExtenderAddr+"/api/v1/groups", &body); err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, g := range body.Groups {
		if g.Name == "gt" {
			t.Logf("group gt notes: %q", g.Notes)
			noted = len(g.Notes) == 1 && strings.HasPrefix(g.Notes[0], "kube-scheduler turned away node "+slot+" for t-1's slot")
		}
	}
	if !noted {
		t.Errorf("GET /api/v1/groups: group gt does not note the node kube-scheduler turned away (%s)", slot)
	}
}

// otherSlotNode: the node of the slot of `bound`'s group that `bound` (on `on`) does not have, from
// topofit's explain of the pod (its group's reservation).
func otherSlotNode(t *testing.T, c *harness.Cluster, name, on string) string {
	t.Helper()
	pod, err := c.GetPod(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+c.ExtenderAddr+"/api/v1/explain", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Group struct {
			Plan []struct{ Node string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	for _, s := range body.Group.Plan {
		if s.Node != on {
			return s.Node
		}
	}
	t.Fatalf("explain of %s: plan %+v has no slot beside %s", name, body.Group.Plan, on)
	return ""
}
