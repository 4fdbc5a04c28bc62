package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

// A pod whose regular init container asks for more GPUs than its app container (docs/node.md, "Init
// containers with more GPUs than the app"). Kubelet's device manager (v1.36.3) allocates the init
// container's GPUs (one preference call, its full size), then fills the app container from them
// alone - choosing which itself, without a preference call - and keeps the init container's
// allocation for the pod's life: the surplus is allocated to nobody else. PodResources never reports
// regular init containers. The test stages two such pods through a real kube-apiserver (topofit node
// --kubeconfig publishes gpu-actual and its Events there) and asserts, against kubelet's own books:
//   - the init container got its plan and the app container GPUs of it only (PodResources List
//     reports no regular init container: TestFidelityUpstreamPreferred);
//   - kubelet keeps the surplus: a pod asking for more than the GPUs no one holds is rejected;
//   - topofit node made one preference call per pod, counts both containers as planned, reports no
//     mismatch (no TopofitGpuSetMismatch Event, topofit_node_plan_mismatches_total 0), and its
//     gpu-actual names what kubelet holds, the init container's GPUs included.
func TestFidelityTopofitNodeInitSurplus(t *testing.T) {
	bin := topofitNodeBinary(t, "--kubeconfig", "--ops-listen", "--reconcile-interval")
	if !nodesim.Hermetic(t) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const node = "n1"
	c := harness.Start(t, harness.Options{NoScheduler: true})
	dir := c.Dir
	plans := &apiPlans{c: c, node: node}
	rig := startNodeRig(ctx, t, bin, node, 8, dir, reconcilingArgs(plans)...)
	k, ids := rig.k, rig.ids
	t0 := time.Now().Add(-time.Hour)
	// Planned as topofit's bind plans them (extender/placement/container_plan.h): the init container
	// on the whole set, the app container on its first GPUs.
	shape := func(name string, at int, set []string, app int) *plannedPod {
		return &plannedPod{plan: map[string][]string{"setup": sorted(set), "main": sorted(set)[:app]},
			pod: nodesim.Pod(name, node, types.UID("uid-"+name), t0.Add(time.Duration(at)*time.Minute),
				nodesim.Container{Name: "setup", GPUs: len(set), Init: true}, nodesim.Container{Name: "main", GPUs: app})}
	}
	pods := []*plannedPod{shape("s1", 1, ids[4:8], 2), shape("s2", 2, ids[1:4], 1)}
	if err := plans.publish(ctx, pods); err != nil {
		t.Fatal(err)
	}
	time.Sleep(plansSettle)
	for _, pp := range pods {
		mustAdmit(t, k, pp.pod, "init surplus")
	}
	kubelet := map[string]map[string][]string{} // pod -> container -> kubelet's IDs
	for _, pp := range pods {
		kubelet[pp.pod.Name] = map[string][]string{}
		for _, cn := range []string{"setup", "main"} {
			got, err := k.ContainerDevices(ctx, pp.pod, cn, nodesim.GPUResource)
			if err != nil {
				t.Fatal(err)
			}
			kubelet[pp.pod.Name][cn] = got.IDs
		}
		got := kubelet[pp.pod.Name]
		if !reflect.DeepEqual(got["setup"], pp.plan["setup"]) || len(got["main"]) != len(pp.plan["main"]) || !subset(got["main"], got["setup"]) {
			t.Errorf("%s: kubelet gave setup %v and main %v; planned setup %v, main %d of them", pp.pod.Name, got["setup"], got["main"],
				pp.plan["setup"], len(pp.plan["main"]))
		}
		t.Logf("%s: kubelet gave setup %v, main %v (planned %v)", pp.pod.Name, got["setup"], got["main"], pp.plan["main"])
	}
	// 7 GPUs are kubelet's: s1's 4 and s2's 3, though their app containers hold 3. One is free.
	probe := nodesim.Pod("probe", node, "uid-probe", time.Now(), nodesim.Container{Name: "c", GPUs: 2})
	if r := k.HandlePodAdditions([]*corev1.Pod{probe})[0]; r.Admit {
		t.Errorf("a pod of 2 GPUs was admitted: kubelet does not keep the init containers' surplus")
	} else {
		t.Logf("a pod of 2 GPUs: %s: %s", r.Reason, r.Message)
	}
	checkInitSurplusReports(ctx, t, c, rig, pods, kubelet)
}

// checkInitSurplusReports: topofit node's metrics, Events and gpu-actual for the pods (see above).
func checkInitSurplusReports(ctx context.Context, t *testing.T, c *harness.Cluster, rig *nodeRig, pods []*plannedPod,
	kubelet map[string]map[string][]string) {
	t.Helper()
	for _, pp := range pods {
		var last string
		for end := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			p, err := c.Client.CoreV1().Pods(c.Namespace).Get(ctx, pp.pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			last = p.Annotations[annotationActual]
			var a gpuAssignment
			if json.Unmarshal([]byte(last), &a) == nil && reflect.DeepEqual(a.Containers, kubelet[pp.pod.Name]) {
				t.Logf("%s: gpu-actual %s", pp.pod.Name, last)
				break
			}
			if time.Now().After(end) {
				t.Errorf("%s: gpu-actual %s after 15 s, kubelet holds %v", pp.pod.Name, last, kubelet[pp.pod.Name])
				break
			}
		}
		events, err := c.PodEvents(ctx, pp.pod.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Reason == "TopofitGpuSetMismatch" {
				t.Errorf("%s: Event %s: %s", pp.pod.Name, e.Reason, e.Message)
			}
		}
	}
	rig.waitReconciles(t, 2)
	_, metrics, err := opsGet(rig.topofit.LogPath, "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		`topofit_node_preferred_allocations_total{outcome="plan"}`: float64(len(pods)), // the init containers only
		"topofit_node_allocate_calls_total":                        float64(2 * len(pods)),
		"topofit_node_allocations_as_planned_total":                float64(2 * len(pods)),
		"topofit_node_plan_mismatches_total":                       0,
	}
	for series, v := range want {
		if got := metricValue(metrics, series); got != v {
			t.Errorf("topofit node's %s = %v, want %v", series, got, v)
		}
	}
	t.Logf("topofit node's metrics: %s", fmt.Sprint(want))
}
