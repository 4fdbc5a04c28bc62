package nodesim

import (
	"context"
	"fmt"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/kubernetes/pkg/kubelet/apis/podresources"
)

// Container describes one container of a test pod: its name, GPUs, and whether it is a
// (non-restartable) init container.
type Container struct {
	Name string
	GPUs int
	Init bool
}

// Pod builds a pod bound to node with the given containers; uid and creation time are what kubelet
// orders and keys on.
func Pod(name, node string, uid types.UID, created time.Time, containers ...Container) *v1.Pod {
	p := &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid,
			CreationTimestamp: metav1.NewTime(created), Annotations: map[string]string{}},
		Spec:   v1.PodSpec{NodeName: node},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	for _, c := range containers {
		ct := v1.Container{Name: c.Name, Image: "none"}
		if c.GPUs > 0 {
			q := *resource.NewQuantity(int64(c.GPUs), resource.DecimalSI)
			ct.Resources = v1.ResourceRequirements{Limits: v1.ResourceList{GPUResource: q}, Requests: v1.ResourceList{GPUResource: q}}
		}
		if c.Init {
			p.Spec.InitContainers = append(p.Spec.InitContainers, ct)
		} else {
			p.Spec.Containers = append(p.Spec.Containers, ct)
		}
	}
	return p
}

// PodResources is a client of kubelet's PodResources v1 socket.
type PodResources struct {
	podresourcesapi.PodResourcesListerClient
	close func() error
}

// DialPodResources connects to the PodResources socket with upstream's client.
func DialPodResources() (*PodResources, error) {
	c, conn, err := podresources.GetV1Client("unix://"+PodResourcesSocket, 10*time.Second, 16<<20)
	if err != nil {
		return nil, err
	}
	return &PodResources{PodResourcesListerClient: c, close: conn.Close}, nil
}

// Close closes the connection.
func (p *PodResources) Close() error { return p.close() }

// Holdings is List's answer as namespace/pod/container -> sorted IDs of resource.
func (p *PodResources) Holdings(ctx context.Context, resource string) (map[string][]string, error) {
	// Kubelet's rate limit (100 QPS, burst 10) is shared with every other client of the socket:
	// past it the answer is ResourceExhausted, which is worth a retry.
	var resp *podresourcesapi.ListPodResourcesResponse
	var err error
	for attempt := 0; ; attempt++ {
		resp, err = p.List(ctx, &podresourcesapi.ListPodResourcesRequest{})
		if status.Code(err) != codes.ResourceExhausted || attempt == 100 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, pr := range resp.GetPodResources() {
		for _, c := range pr.GetContainers() {
			var ids []string
			for _, d := range c.GetDevices() {
				if d.GetResourceName() == resource {
					ids = append(ids, d.GetDeviceIds()...)
				}
			}
			sort.Strings(ids)
			out[fmt.Sprintf("%s/%s/%s", pr.GetNamespace(), pr.GetName(), c.GetName())] = ids
		}
	}
	return out, nil
}

// WaitForStableDevices waits until the device manager has reported n healthy devices of resource
// for `stable` without a break, and returns when that stretch began (a restart elsewhere may drop
// them for a moment after it returned: kubelet notices a broken stream asynchronously).
func (k *Kubelet) WaitForStableDevices(ctx context.Context, resource string, n int, stable time.Duration) (time.Time, error) {
	var since time.Time
	for {
		_, allocatable, _ := k.Manager().GetCapacity()
		q, ok := allocatable[v1.ResourceName(resource)]
		switch {
		case !ok || int(q.Value()) != n:
			since = time.Time{}
		case since.IsZero():
			since = time.Now()
		case time.Since(since) >= stable:
			return since, nil
		}
		select {
		case <-ctx.Done():
			return since, fmt.Errorf("waiting for %d healthy %s for %v: %w (allocatable %v)", n, resource, stable, ctx.Err(), allocatable)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// WaitForDevices waits until the device manager reports n healthy devices of resource.
func (k *Kubelet) WaitForDevices(ctx context.Context, resource string, n int) error {
	for {
		dm := k.Manager()
		var allocatable v1.ResourceList
		_, allocatable, _ = dm.GetCapacity() // allocatable: the healthy devices
		if q, ok := allocatable[v1.ResourceName(resource)]; ok && int(q.Value()) == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %d healthy %s: %w (allocatable %v)", n, resource, ctx.Err(), allocatable)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
