package tests

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

// replicaIDs are the device ids the NVIDIA device plugin advertises for `gpus` GPUs time-sliced (or
// shared by MPS) `replicas` ways: "<uuid>::<replica>" (its internal/rm NewAnnotatedID; docs/shared-gpus.md).
func replicaIDs(gpus, replicas int) []string {
	var ids []string
	for _, uuid := range nodesim.GPUIDs(gpus) {
		for r := 0; r < replicas; r++ {
			ids = append(ids, fmt.Sprintf("%s::%d", uuid, r))
		}
	}
	return ids
}

// physicalGPUs counts the distinct GPUs of replica ids.
func physicalGPUs(ids []string) int {
	gpus := map[string]bool{}
	for _, id := range ids {
		gpus[strings.SplitN(id, "::", 2)[0]] = true
	}
	return len(gpus)
}

// migIDs are MIG device ids as the NVIDIA device plugin advertises them under the single strategy: each
// MIG device's own UUID ("MIG-" and a UUID, nothing naming its GPU); `gpus` GPUs of `per` devices, GPU
// g's i-th at index g*per+i (the order of topofit.io/gpu-mig-uuids, docs/shared-gpus.md).
func migIDs(gpus, per int) []string {
	var ids []string
	for g := 0; g < gpus; g++ {
		for i := 0; i < per; i++ {
			ids = append(ids, fmt.Sprintf("MIG-%08x-0000-5000-8000-%012d", 0xf0000000-g*per-i, g*per+i))
		}
	}
	return ids
}

// Shared devices behind topofit node, with kubelet's real device manager: pods planned on replicas of
// distinct GPUs of a time-sliced node (4 GPUs x 4 replicas), or on MIG devices of one GPU (4 GPUs x 3),
// get exactly those devices, although the stub behind topofit node prefers the lexicographically first
// free ids (two replicas of GPU 0; MIG devices of the last GPU); a pod without a plan gets the stub's
// choice among the devices nobody planned.
func TestFidelityTopofitNodeSharedDevices(t *testing.T) {
	bin := topofitNodeBinary(t, "--pods-file", "--ops-listen", "--reconcile-interval")
	if !nodesim.Hermetic(t) {
		return
	}
	r := replicaIDs(4, 4) // GPU g's replica k is r[4g+k].
	m := migIDs(4, 3)     // GPU g's MIG device k is m[3g+k].
	t.Run("replicas", func(t *testing.T) {
		got := runSharedRig(t, bin, r, [][]string{{r[4*1+2], r[4*3+0]}, {r[4*0+3], r[4*2+1], r[4*3+1]}})
		for i, ids := range got {
			if n := physicalGPUs(ids); n != len(ids) {
				t.Errorf("pod %d got %v: %d replicas on %d GPUs", i, ids, len(ids), n)
			}
		}
	})
	t.Run("MIG", func(t *testing.T) {
		runSharedRig(t, bin, m, [][]string{{m[3*0+0], m[3*0+1]}, {m[3*2+2]}})
	})
}

// runSharedRig starts a node rig whose stub serves `ids`, admits one pod per plan (in order) and then a
// pod of two devices without a plan; each planned pod must get its plan, no device two pods. Returns
// what the planned pods got.
func runSharedRig(t *testing.T, bin string, ids []string, planned [][]string) [][]string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const node = "n1"
	rig, plans := startFilePlansRig(ctx, t, bin, node, ids, harness.ArtifactsDir(t))
	t0 := time.Now().Add(-time.Hour)
	var all []*plannedPod
	for i, p := range planned {
		all = append(all, mainPod(node, t0, fmt.Sprintf("p%d", i), i, p, len(p)))
	}
	f := mainPod(node, t0, "f", len(planned), nil, 2)
	all = append(all, f)
	if err := plans.publish(ctx, all); err != nil {
		t.Fatal(err)
	}
	time.Sleep(plansSettle)
	held := map[string]string{}
	admit := func(pp *plannedPod) []string {
		t.Helper()
		got := admittedDevices(ctx, t, rig.k, pp.pod, "shared devices")
		for _, id := range got {
			if other, taken := held[id]; taken {
				t.Errorf("%s got %s, already %s's", pp.pod.Name, id, other)
			}
			held[id] = pp.pod.Name
		}
		return got
	}
	var out [][]string
	for _, pp := range all[:len(planned)] {
		got := admit(pp)
		if want := pp.plan["main"]; !reflect.DeepEqual(got, want) {
			t.Errorf("%s got %v, planned %v", pp.pod.Name, got, want)
		} else {
			t.Logf("%s got its plan %v", pp.pod.Name, got)
		}
		out = append(out, got)
	}
	if got := admit(f); len(got) != 2 {
		t.Errorf("f got %v, want 2 devices", got)
	} else {
		t.Logf("f (no plan) got the stub's choice %v", got)
	}
	return out
}
