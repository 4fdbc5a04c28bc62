package tests

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"

	"topofit.dev/e2e/nodesim"
)

// The fidelity harness proven without topofit: upstream's stub device plugin registered directly to
// upstream's device manager (nodesim). It checks the facts the node side of topofit relies on
// (docs/node-fidelity.md): kubelet follows a full, valid GetPreferredAllocation answer exactly; it asks
// once per container with the container's full size, the reused init-container devices as
// must_include; a preferred ID it does not have available is dropped and the shortfall filled; the
// backend's Allocate env reaches the container; PodResources List and Get report kubelet's IDs;
// a failed allocation rejects the pod with UnexpectedAdmissionError; after a restart (sockets wiped)
// the plugin re-registers and the checkpoint keeps every allocation.

type preferCall struct {
	available, mustInclude []string
	size                   int
}

func sorted(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	return out
}

func TestFidelityUpstreamPreferred(t *testing.T) {
	if !nodesim.Hermetic(t) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	k, err := nodesim.StartKubelet(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop(ctx)

	ids := nodesim.GPUIDs(8)
	var mu sync.Mutex
	var calls []preferCall
	held := "" // when set, the preference also names this (unavailable) ID
	prefer := func(available, mustInclude []string, size int) []string {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, preferCall{sorted(available), sorted(mustInclude), size})
		if held != "" {
			return append([]string{held}, nodesim.PreferLast(available, mustInclude, size-1)...)
		}
		return nodesim.PreferLast(available, mustInclude, size)
	}
	if _, err := nodesim.StartBackend(ctx, nodesim.DevicePluginDir+"/nvidia-gpu.sock", nodesim.KubeletSocket, ids, prefer); err != nil {
		t.Fatal(err)
	}
	if err := k.WaitForDevices(ctx, nodesim.GPUResource, 8); err != nil {
		t.Fatal(err)
	}

	// One batch, given out of creation order: kubelet sorts it. c has a 1-GPU init container whose
	// GPU its 3-GPU app container reuses.
	t0 := time.Now().Add(-time.Hour)
	a := nodesim.Pod("a", "n1", "uid-a", t0.Add(1*time.Second), nodesim.Container{Name: "main", GPUs: 2})
	b := nodesim.Pod("b", "n1", "uid-b", t0.Add(2*time.Second), nodesim.Container{Name: "main", GPUs: 1})
	c := nodesim.Pod("c", "n1", "uid-c", t0.Add(3*time.Second),
		nodesim.Container{Name: "setup", GPUs: 1, Init: true}, nodesim.Container{Name: "main", GPUs: 3})
	d := nodesim.Pod("d", "n1", "uid-d", t0.Add(4*time.Second), nodesim.Container{Name: "main", GPUs: 1})
	for _, r := range k.HandlePodAdditions([]*corev1.Pod{d, c, a, b}) {
		if !r.Admit {
			t.Fatalf("pod %s rejected: %s %s", r.Pod.Name, r.Reason, r.Message)
		}
	}
	// Expected, from the preference alone (lexicographically last free IDs) in creation order:
	// a: 7,6  b: 5  c/setup: 4  c/main: 4 (reused) + 3,2  d: 1.
	want := map[string][]string{
		"a/main": {ids[6], ids[7]}, "b/main": {ids[5]}, "c/setup": {ids[4]}, "c/main": {ids[2], ids[3], ids[4]}, "d/main": {ids[1]},
	}
	wantCalls := []preferCall{
		{sorted(ids), nil, 2},
		{sorted(ids[:6]), nil, 1},
		{sorted(ids[:5]), nil, 1},
		{sorted(ids[:5]), []string{ids[4]}, 3}, // available = free ∪ must_include; size = the full request
		{sorted(ids[:2]), nil, 1},
	}
	pods := map[string]*corev1.Pod{"a": a, "b": b, "c": c, "d": d}
	for key, w := range want {
		pod, container := splitKey(key)
		got, err := k.ContainerDevices(ctx, pods[pod], container, nodesim.GPUResource)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if !reflect.DeepEqual(got.IDs, w) {
			t.Errorf("%s: kubelet's IDs %v, the preference was %v", key, got.IDs, w)
		}
		if env := nodesim.SortedIDs(got.Env[nodesim.VisibleDevicesEnv]); !reflect.DeepEqual(env, w) {
			t.Errorf("%s: %s=%v in the container, want %v", key, nodesim.VisibleDevicesEnv, env, w)
		}
	}
	mu.Lock()
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("GetPreferredAllocation requests:\n got %+v\nwant %+v", calls, wantCalls)
	}
	calls = nil
	mu.Unlock()

	pr, err := nodesim.DialPodResources()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	holdings, err := pr.Holdings(ctx, nodesim.GPUResource)
	if err != nil {
		t.Fatal(err)
	}
	// List reports app (and restartable init) containers only, with kubelet's IDs.
	wantList := map[string][]string{}
	for key, w := range want {
		if key != "c/setup" {
			wantList["default/"+key] = w
		}
	}
	if !reflect.DeepEqual(holdings, wantList) {
		t.Errorf("PodResources List: %v, want %v", holdings, wantList)
	}
	if _, err := pr.Get(ctx, &podresourcesapi.GetPodResourcesRequest{PodNamespace: "default", PodName: "unknown"}); err == nil {
		t.Error("PodResources Get of a pod kubelet does not know: no error")
	}

	// A pod asking more than is free is rejected, as kubelet rejects it.
	big := nodesim.Pod("big", "n1", "uid-big", t0.Add(5*time.Second), nodesim.Container{Name: "main", GPUs: 2})
	if r := k.HandlePodAdditions([]*corev1.Pod{big})[0]; r.Admit || r.Reason != "UnexpectedAdmissionError" {
		t.Errorf("2 GPUs with 1 free: admit=%v reason=%q message=%q, want a rejection UnexpectedAdmissionError", r.Admit, r.Reason, r.Message)
	} else {
		t.Logf("rejected as kubelet rejects it: %s: %s", r.Reason, r.Message)
	}

	// a terminates: its GPUs come back at the next UpdateAllocatedDevices (here from List).
	k.Terminate(a.UID)
	if _, err := pr.Holdings(ctx, nodesim.GPUResource); err != nil {
		t.Fatal(err)
	}
	// Get of a pod kubelet knows but that is terminal still answers (server_v1.go checks existence only).
	if resp, err := pr.Get(ctx, &podresourcesapi.GetPodResourcesRequest{PodNamespace: "default", PodName: "a"}); err != nil {
		t.Errorf("PodResources Get of the terminated pod a: %v", err)
	} else {
		t.Logf("Get of terminated pod a answers: %v", resp.GetPodResources())
	}

	// A preference naming an ID that is not available (b's): kubelet drops it and fills the
	// shortfall from what is free; the rest of the preference is kept.
	mu.Lock()
	held = ids[5]
	mu.Unlock()
	e := nodesim.Pod("e", "n1", "uid-e", t0.Add(6*time.Second), nodesim.Container{Name: "main", GPUs: 2})
	gotE := admittedDevices(ctx, t, k, e, "held GPU")
	free := []string{ids[0], ids[6], ids[7]}
	if len(gotE) != 2 || !contains(gotE, ids[7]) || contains(gotE, ids[5]) || !subset(gotE, free) {
		t.Errorf("e got %v; want %s (kept from the preference) and one more of %v, never %s (held by b)", gotE, ids[7], free, ids[5])
	}

	// Kubelet restart: the device manager's new plugin server wipes the plugin directory's sockets
	// and listens again; the stub (its inotify Watch) re-registers; the checkpoint keeps the
	// allocations, and the next pod gets the preference again.
	if err := k.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.WaitForDevices(ctx, nodesim.GPUResource, 8); err != nil {
		t.Fatal(err)
	}
	for key, w := range map[string][]string{"b/main": want["b/main"], "c/main": want["c/main"], "d/main": want["d/main"]} {
		pod, container := splitKey(key)
		got, err := k.ContainerDevices(ctx, pods[pod], container, nodesim.GPUResource)
		if err != nil || !reflect.DeepEqual(got.IDs, w) {
			t.Errorf("after restart %s: %v %v, want %v (from the checkpoint)", key, got.IDs, err, w)
		}
	}
	mu.Lock()
	held = ""
	mu.Unlock()
	f := nodesim.Pod("f", "n1", "uid-f", t0.Add(7*time.Second), nodesim.Container{Name: "main", GPUs: 1})
	gotF := admittedDevices(ctx, t, k, f, "after restart")
	if wantF := nodesim.PreferLast(without(free, gotE), nil, 1); !reflect.DeepEqual(gotF, wantF) {
		t.Errorf("f after restart: %v, want the preference %v", gotF, wantF)
	}
}

func splitKey(key string) (string, string) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	panic(fmt.Sprintf("bad key %q", key))
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func subset(ids, of []string) bool {
	for _, x := range ids {
		if !contains(of, x) {
			return false
		}
	}
	return true
}

func without(ids, drop []string) []string {
	var out []string
	for _, x := range ids {
		if !contains(drop, x) {
			out = append(out, x)
		}
	}
	return out
}
