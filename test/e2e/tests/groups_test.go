package tests

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
)

// TestTopofitGroups: groups of 8-GPU pods (topofit.io/group) through the real kube-scheduler and
// kube-apiserver, on six fake 8-GPU nodes in three NVLink racks of two (nvidia.com/gpu.clique r1..r3,
// one block). docs/groups.md describes the mechanism; each step below is one of its promises:
//   - a member waits, with the reason in its FailedScheduling event, until its group is all there;
//     then the group lands in one rack - the first whole one, r1 having one node taken by a solo pod;
//   - a member deleted and re-created goes back into its group's rack (r2), not to the free node of r1
//     that a group planned from scratch would prefer by name;
//   - a group bigger than any rack with `required` stays Pending whole, the reason in every member's
//     event, nothing reserved;
//   - two groups race for the last whole rack (r3): one gets all of it, the other none;
//   - GET /api/v1/groups shows each group's state and domain;
//   - then, on two racks added (groups_robust_test.go): topofit killed mid-group and restarted, and a
//     member's slot node tainted before it binds.
func TestTopofitGroups(t *testing.T) {
	c, ext := startTopofit(t, rackNodes(3, 2)...)
	ctx := context.Background()
	rackOf := func(node string) string { return strings.SplitN(node, "-", 2)[0] }
	member := rackMember

	solo := harness.GPUPod("solo", 8)
	solo.NodeName = "r1-n1"
	mustCreate(t, c, solo)
	scheduled(t, c, "solo", 8, 8)

	// Held until both members exist, then one rack: r2 (r1 has room for one).
	mustCreate(t, c, member("a-0", "ga", 2))
	if _, err := c.WaitForFailedScheduling(ctx, "a-0", 20*time.Second, "group ga: 1 of 2 pods created"); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, c, member("a-1", "ga", 2))
	n0, _ := scheduled(t, c, "a-0", 8, 8)
	n1, _ := scheduled(t, c, "a-1", 8, 8)
	if rackOf(n0) != "r2" || rackOf(n1) != "r2" || n0 == n1 {
		t.Fatalf("group ga on %s and %s, want the two nodes of rack r2", n0, n1)
	}

	// A restarted worker: deleted, re-created under the same name, back in r2.
	mustDelete(t, c, "a-1")
	mustCreate(t, c, member("a-1", "ga", 2))
	if again, _ := scheduled(t, c, "a-1", 8, 8); again != n1 {
		t.Errorf("re-created member on %s, want %s (its group's rack r2)", again, n1)
	}

	// Bigger than any rack: Pending whole, each member saying why.
	for i := 0; i < 3; i++ {
		mustCreate(t, c, member(fmt.Sprintf("big-%d", i), "big", 3))
	}
	for i := 0; i < 3; i++ {
		if _, err := c.WaitForFailedScheduling(ctx, fmt.Sprintf("big-%d", i), 30*time.Second,
			"group big: no accelerator can take 3 members of 8 GPUs"); err != nil {
			t.Fatal(err)
		}
	}

	// Two groups race for r3, the last whole rack.
	var wg sync.WaitGroup
	for _, name := range []string{"c-0", "d-0", "c-1", "d-1"} {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			mustCreate(t, c, member(name, "g"+name[:1], 2))
		}(name)
	}
	wg.Wait()
	winner := waitOneGroupBound(t, c, []string{"c", "d"})
	loser := map[string]string{"c": "d", "d": "c"}[winner]
	for _, i := range []string{"0", "1"} {
		node, _ := scheduled(t, c, winner+"-"+i, 8, 8)
		if rackOf(node) != "r3" {
			t.Errorf("group g%s member on %s, want rack r3", winner, node)
		}
		// Every member of the loser says why (topofit asks kube-scheduler to retry the others when its
		// reason changes).
		if _, err := c.WaitForFailedScheduling(ctx, loser+"-"+i, 30*time.Second,
			"group g"+loser+": no accelerator can take 2 members of 8 GPUs"); err != nil {
			t.Error(err)
		}
	}
	time.Sleep(2 * time.Second) // the loser stays whole: none of its members is bound later either
	for _, i := range []string{"0", "1"} {
		if p, err := c.GetPod(ctx, loser+"-"+i); err != nil || p.Spec.NodeName != "" {
			t.Errorf("group g%s member %s-%s bound to %q (err %v): a group must wait whole", loser, loser, i, p.Spec.NodeName, err)
		}
	}

	var body struct {
		Groups []struct {
			Name, State, Domain, Reason string
			MembersSeen, MembersBound   int
		}
	}
	if err := getJSON("http://"+c.ExtenderAddr+"/api/v1/groups", &body); err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, g := range body.Groups {
		states[g.Name] = g.State + " " + g.Domain
		t.Logf("group %s: %s, %d seen, %d bound, domain %q, reason %q", g.Name, g.State, g.MembersSeen,
			g.MembersBound, g.Domain, g.Reason)
	}
	if states["ga"] != "bound accelerator b1/r2" || states["big"] != "waiting " || states["g"+loser] != "waiting " {
		t.Errorf("GET /api/v1/groups states %v: want ga bound in accelerator b1/r2, big and g%s waiting", states, loser)
	}

	for _, name := range []string{loser + "-0", loser + "-1", "big-0", "big-1", "big-2"} {
		mustDelete(t, c, name)
	}
	groupsRobustness(t, c, ext)
}

// rackNode: fake 8-GPU node r<rack>-n<n> (hgx-h100-8) in NVLink rack r<rack> (nvidia.com/gpu.clique) of block b1.
func rackNode(rack, n int) harness.NodeSpec {
	spec := harness.GPUNode(fmt.Sprintf("r%d-n%d", rack, n), 8, "hgx-h100-8")
	spec.Labels = map[string]string{"nvidia.com/gpu.clique": fmt.Sprintf("r%d", rack),
		"network.topology.nvidia.com/block": "b1"}
	return spec
}

// rackNodes: racks r1..r<racks> of perRack rackNodes each.
func rackNodes(racks, perRack int) []harness.NodeSpec {
	var nodes []harness.NodeSpec
	for r := 1; r <= racks; r++ {
		for n := 1; n <= perRack; n++ {
			nodes = append(nodes, rackNode(r, n))
		}
	}
	return nodes
}

// rackMember: a member of `group` (size members) asking 8 GPUs, required in one NVLink rack.
func rackMember(name, group string, size int) harness.PodSpec {
	spec := harness.GPUPod(name, 8)
	spec.Annotations = map[string]string{"topofit.io/group": group, "topofit.io/group-size": fmt.Sprint(size),
		"topofit.io/group-level": "accelerator", "topofit.io/group-policy": "required"}
	return spec
}

// waitOneGroupBound waits until both members ("<g>-0", "<g>-1") of one of the groups are bound; returns it.
func waitOneGroupBound(t *testing.T, c *harness.Cluster, groups []string) string {
	t.Helper()
	deadline := time.Now().Add(harness.DefaultWait)
	for time.Now().Before(deadline) {
		for _, g := range groups {
			bound := 0
			for _, i := range []string{"0", "1"} {
				if p, err := c.GetPod(context.Background(), g+"-"+i); err == nil && p.Spec.NodeName != "" {
					bound++
				}
			}
			if bound == 2 {
				return g
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no group of %v got both members bound within %v", groups, harness.DefaultWait)
	return ""
}
