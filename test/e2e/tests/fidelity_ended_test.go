package tests

import (
	"context"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

// A pod kubelet has finished cannot win the match for the next pod of its size (docs/node.md,
// "Pods kubelet has finished"). Kubelet's PodResources Get answers for every pod of its pod manager,
// ended and rejected ones too, and once kubelet has freed an ended pod's devices Get says its
// containers hold none - what it also says of the pod it is admitting. Here the final phase of those
// pods never reaches topofit node (--pods-file keeps them Pending), so only kubelet can tell.
//   - Ended: A (2 GPUs, planned on the last two) is admitted and gets its plan; kubelet ends it; a
//     reconcile passes; B (2 GPUs, created after A, another plan) must get B's plan, not A's.
//   - Rejected: C (2 GPUs) is rejected while topofit node is away (kubelet has no healthy GPU then:
//     "Restart windows"); topofit node starts again knowing nothing of A or C; a reconcile passes;
//     D (2 GPUs, created after C, another plan) must get D's plan.
//
// The stub's own preference is the first free GPUs, and no plan admitted here is that, so a pod on its plan
// got it from topofit node.
func TestFidelityTopofitNodeEndedPods(t *testing.T) {
	bin := topofitNodeBinary(t, "--pods-file", "--ops-listen", "--reconcile-interval")
	if !nodesim.Hermetic(t) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const node = "n1"
	rig, plans := startFilePlansRig(ctx, t, bin, node, nodesim.GPUIDs(8), harness.ArtifactsDir(t))
	k, ids := rig.k, rig.ids
	t0 := time.Now().Add(-time.Hour)
	var all []*plannedPod
	// add plans a one-container pod on `plan`, created `at` minutes after t0, and publishes it.
	add := func(name string, at int, plan []string) *plannedPod {
		pp := mainPod(node, t0, name, at, plan, len(plan))
		all = append(all, pp)
		if err := plans.publish(ctx, all); err != nil {
			t.Fatal(err)
		}
		time.Sleep(plansSettle)
		return pp
	}
	onPlan := func(pp *plannedPod, what string) {
		t.Helper()
		got := admittedDevices(ctx, t, k, pp.pod, what)
		if want := pp.plan["main"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s got %v, planned %v", what, pp.pod.Name, got, want)
		} else {
			t.Logf("%s: %s got its plan %v", what, pp.pod.Name, got)
		}
	}

	a := add("a", 1, ids[6:8])
	onPlan(a, "before")
	k.Terminate(a.pod.UID)
	rig.waitReconciles(t, 2)
	onPlan(add("b", 2, ids[4:6]), "after A ended")

	c := add("c", 3, ids[0:2])
	if err := rig.topofit.Stop(5 * time.Second); err != nil {
		t.Logf("topofit node stopped: %v", err)
	}
	if err := k.WaitForDevices(ctx, nodesim.GPUResource, 0); err != nil {
		t.Fatalf("kubelet did not mark the GPUs unhealthy when topofit node stopped: %v", err)
	}
	if r := k.HandlePodAdditions([]*corev1.Pod{c.pod})[0]; r.Admit || r.Reason != "UnexpectedAdmissionError" {
		t.Fatalf("C admitted while kubelet had no healthy GPU: admit=%v %s: %s", r.Admit, r.Reason, r.Message)
	}
	if err := rig.topofit.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitForSocket(ctx, rig.topofit, rig.registrar); err != nil {
		t.Fatal(err)
	}
	if err := k.WaitForDevices(ctx, nodesim.GPUResource, 8); err != nil {
		t.Fatalf("after the topofit node restart: %v\n%s", err, harness.TailFile(rig.topofit.LogPath, 20))
	}
	rig.waitReconciles(t, 2)
	onPlan(add("d", 4, ids[2:4]), "after C was rejected")
}
