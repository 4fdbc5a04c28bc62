package tests

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"topofit.dev/e2e/harness"
)

// GPUs served by DRA (docs/dra.md): the real kube-apiserver and kube-scheduler v1.36.3 with a
// DeviceClass mapping nvidia.com/gpu (DRAExtendedResource, on by default in 1.36), fake DRA nodes that
// publish their GPUs in ResourceSlices and advertise no nvidia.com/gpu (as kubelet does for a DRA
// driver's devices), beside a device-plugin node. No kubelet or DRA driver is needed to schedule:
// kube-scheduler allocates the pod's claim in PreBind and calls topofit's bind after it.
//
// Asserted: every pod lands; a pod on a DRA node has an allocated extended-resource claim, and
// topofit's model names exactly the claim's GPUs as the pod's; the device-plugin node's pods get
// topofit's own set (gpu-ids) and no claim; topofit sends a 2-GPU pod to the DRA node whose first
// fit is two GPUs under one PCIe root rather than the one whose first fit crosses roots; the
// GPUsAssigned event says whether the claim got the GPUs topofit predicted. A pod that asks GPUs
// through a ResourceClaim of its own (no nvidia.com/gpu: kube-scheduler's DRA plugin filters and
// binds it, topofit only scores it, by the set the allocator will give it) goes to paired as well,
// and topofit's model holds its claim's GPUs.

const draDriver = "gpu.nvidia.com"

func ref[T any](v T) *T { return &v }

func draUUID(node string, i int) string { return fmt.Sprintf("GPU-%s-%d", node, i) }

// draSlice publishes 4 GPUs of `node` in the order `order` (device gpu-<i>: bus 0000:1<i>:00.0, PCIe
// root pci0000:0<i/2>, so GPUs 0,1 and 2,3 share a root).
func draSlice(node string, order []int) *resourcev1.ResourceSlice {
	var devices []resourcev1.Device
	for _, i := range order {
		devices = append(devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type":                            {StringValue: ref("gpu")},
				"uuid":                            {StringValue: ref(draUUID(node, i))},
				"pcieBusID":                       {StringValue: ref(fmt.Sprintf("0000:1%d:00.0", i))},
				"productName":                     {StringValue: ref("Tesla T4")},
				"resource.kubernetes.io/pcieRoot": {StringValue: ref(fmt.Sprintf("pci0000:0%d", i/2))},
			},
		})
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   draDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ref(node),
			Devices:  devices,
		},
	}
}

func draClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: draDriver},
		Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}},
			ExtendedResourceName: ref(string(harness.GPUResource)),
		},
	}
}

// claimUUIDs: the GPUs of the pod's allocated extended-resource claim (nil while there is none).
func claimUUIDs(t *testing.T, c *harness.Cluster, pod *corev1.Pod) []string {
	t.Helper()
	claims, err := c.Client.ResourceV1().ResourceClaims(c.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, claim := range claims.Items {
		owned := false
		for _, o := range claim.OwnerReferences {
			owned = owned || o.UID == pod.UID
		}
		if owned && claim.Status.Allocation != nil {
			return allocatedUUIDs(&claim)
		}
	}
	return nil
}

// allocatedUUIDs: the GPUs of an allocated claim, sorted.
func allocatedUUIDs(claim *resourcev1.ResourceClaim) []string {
	var out []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		var i int
		fmt.Sscanf(r.Device, "gpu-%d", &i)
		out = append(out, draUUID(r.Pool, i))
	}
	sort.Strings(out)
	return out
}

// modelUUIDs: the GPUs topofit's model gives the pod on its node.
func modelUUIDs(c *harness.Cluster, node, pod string) ([]string, error) {
	states, err := gpuStates(c, node)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range states {
		if s.Pod == c.Namespace+"/"+pod {
			out = append(out, s.UUID)
		}
	}
	sort.Strings(out)
	return out, nil
}

// createClaimPod creates a ResourceClaim asking `gpus` GPUs of the class and a pod using it.
func createClaimPod(t *testing.T, c *harness.Cluster, name string, gpus int64) {
	t.Helper()
	ctx := context.Background()
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.Namespace},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpus",
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: draDriver,
				AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: gpus},
		}}}},
	}
	if _, err := c.Client.ResourceV1().ResourceClaims(c.Namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := harness.PodObject(c.Namespace, harness.GPUPod(name, 0))
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpus", ResourceClaimName: ref(name)}}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	if _, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func startDRA(t *testing.T) *harness.Cluster {
	ctx := context.Background()
	c, _ := startTopofit(t, harness.GPUNode("dp", 4, ""), harness.GPUNode("cross", 0, ""),
		harness.GPUNode("paired", 0, ""))
	if _, err := c.Client.ResourceV1().DeviceClasses().Create(ctx, draClass(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// cross: the allocator tries GPU 0 then 2 (different PCIe roots); paired: 0 then 1 (one root).
	for node, order := range map[string][]int{"cross": {0, 2, 1, 3}, "paired": {0, 1, 2, 3}} {
		if _, err := c.Client.ResourceV1().ResourceSlices().Create(ctx, draSlice(node, order), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitTopofitNodes(t, c, 3)
	waitStates(t, c, "paired", 10*time.Second, "topofit sees paired's DRA GPUs", expect(c, map[int]string{3: "free"}))
	waitStates(t, c, "cross", 10*time.Second, "topofit sees cross's DRA GPUs", expect(c, map[int]string{3: "free"}))
	return c
}

func TestTopofitDRA(t *testing.T) {
	c := startDRA(t)
	ctx := context.Background()
	pin := func(name string, gpus int, node string) {
		spec := harness.GPUPod(name, gpus)
		spec.NodeName = node
		mustCreate(t, c, spec)
	}
	// A pod with its own 2-GPU claim, then a 2-GPU pod, free to go anywhere: topofit predicts that
	// paired's first fit (one root: 0,1, then 2,3) beats cross's (0,2) for both.
	createClaimPod(t, c, "own", 2)
	own, err := c.WaitForPod(ctx, "own", harness.DefaultWait, "bound", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
	if err != nil {
		t.Fatal(err)
	}
	if own.Spec.NodeName != "paired" {
		t.Errorf("pod with its own 2-GPU claim on %s, want paired (its first fit shares a PCIe root)", own.Spec.NodeName)
	}
	ownClaim, err := c.Client.ResourceV1().ResourceClaims(c.Namespace).Get(ctx, "own", metav1.GetOptions{})
	if err != nil || ownClaim.Status.Allocation == nil {
		t.Fatalf("claim own: %v, allocated %v", err, err == nil && ownClaim.Status.Allocation != nil)
	}
	ownUUIDs := allocatedUUIDs(ownClaim)
	waitStates(t, c, own.Spec.NodeName, 5*time.Second, "topofit's model holds claim own's GPUs", func([]gpuState) error {
		model, err := modelUUIDs(c, own.Spec.NodeName, "own") // A user's claim holds as <namespace>/<claim>.
		if err != nil {
			return err
		}
		if strings.Join(model, ",") != strings.Join(ownUUIDs, ",") {
			return fmt.Errorf("model %v, claim %v", model, ownUUIDs)
		}
		return nil
	})
	mustCreate(t, c, harness.GPUPod("pair", 2))
	node, _ := scheduled(t, c, "pair", 2, 4)
	if node != "paired" {
		t.Errorf("2-GPU pod on %s, want paired (its first fit shares a PCIe root)", node)
	}
	pin("on-cross", 3, "cross")
	pin("on-dp", 2, "dp")

	for _, p := range []struct {
		name, node string
		gpus       int
	}{{"pair", "paired", 2}, {"on-cross", "cross", 3}, {"on-dp", "dp", 2}} {
		got, _ := scheduled(t, c, p.name, p.gpus, 4)
		if got != p.node {
			t.Fatalf("pod %s on %s, want %s", p.name, got, p.node)
		}
		pod, err := c.GetPod(ctx, p.name)
		if err != nil {
			t.Fatal(err)
		}
		claim := claimUUIDs(t, c, pod)
		if p.node == "dp" {
			if claim != nil {
				t.Errorf("pod %s on the device-plugin node has a DRA claim %v", p.name, claim)
			}
			continue
		}
		if len(claim) != p.gpus {
			t.Fatalf("pod %s: claim GPUs %v, want %d allocated", p.name, claim, p.gpus)
		}
		waitStates(t, c, p.node, 5*time.Second, "topofit's model equals "+p.name+"'s claim", func([]gpuState) error {
			model, err := modelUUIDs(c, p.node, p.name)
			if err != nil {
				return err
			}
			if strings.Join(model, ",") != strings.Join(claim, ",") {
				return fmt.Errorf("model %v, claim %v", model, claim)
			}
			return nil
		})
		t.Logf("%s on %s: claim %v = model", p.name, p.node, claim)
	}
	events, err := c.PodEvents(ctx, "pair")
	if err != nil {
		t.Fatal(err)
	}
	note := ""
	for _, e := range events {
		if e.Reason == "GPUsAssigned" {
			note = e.Message
		}
	}
	if !strings.Contains(note, "DRA claim allocated GPUs 2,3 as predicted") {
		t.Errorf("pair's GPUsAssigned event %q does not say the claim got the predicted GPUs 2,3", note)
	}
}
