// Package nodesim runs the parts of kubelet that a device plugin talks to, from upstream's own code
// (the k8s.io/kubernetes version pinned in go.mod), with no kubelet binary and no container runtime:
//
//   - the device manager (pkg/kubelet/cm/devicemanager, NewManagerImpl): kubelet's Registration
//     server on the fixed /var/lib/kubelet/device-plugins/kubelet.sock, the endpoints it dials, its
//     allocation algorithm, its checkpoint;
//   - the Topology Manager with policy "none" (kubelet's default), which is the admit handler that
//     calls the device manager's Allocate once per container, init containers first;
//   - the PodResources v1 server (pkg/kubelet/apis/podresources) on
//     /var/lib/kubelet/pod-resources/kubelet.sock, with kubelet's rate limit;
//   - upstream's stub device plugin (plugin/v1beta1/stub.go) as the vendor plugin (backend.go).
//
// Kubelet is what this package plays around them: HandlePodAdditions (a batch sorted by creation
// time, each pod added to the pod manager and then admitted, one after another), the pod manager and
// the active-pods list, pod termination, and a restart (the device manager stopped and a new one
// started: it wipes the sockets of the plugin directory and reloads its checkpoint).
//
// The paths are kubelet's fixed ones, so a process using this package must own /var/lib/kubelet:
// Hermetic (hermetic.go) re-runs a test inside its own mount namespace with a tmpfs there.
package nodesim

import (
	"context"
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
	apisgrpc "k8s.io/kubernetes/pkg/kubelet/apis/grpc"
	"k8s.io/kubernetes/pkg/kubelet/apis/podresources"
	"k8s.io/kubernetes/pkg/kubelet/cm/containermap"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/topologymanager"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
	"k8s.io/kubernetes/pkg/kubelet/util/sliceutils"
)

// Kubelet's fixed paths (pluginapi.KubeletSocket, podresources.Socket under the pod-resources dir).
const (
	DevicePluginDir    = "/var/lib/kubelet/device-plugins"
	KubeletSocket      = DevicePluginDir + "/kubelet.sock"
	PodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock"
)

// Kubelet is the device-manager side of one node.
type Kubelet struct {
	mu       sync.Mutex
	pods     map[types.UID]*v1.Pod // the pod manager: every pod added, admitted or not
	inactive map[types.UID]string  // pods out of activePods: terminal, or rejected at admission (reason)
	dm       *devicemanager.ManagerImpl
	tm       topologymanager.Manager
	pr       *grpc.Server
	prStats  rpcStats
}

// PodResourcesCalls counts the PodResources calls served since the start, by method (List, Get,
// GetAllocatableResources), and those of them rejected by kubelet's rate limit (ResourceExhausted).
func (k *Kubelet) PodResourcesCalls() (calls, rateLimited map[string]int) {
	return k.prStats.snapshot()
}

// rpcStats is a gRPC stats handler: it sees every call, those the rate-limit interceptor rejects too.
type rpcStats struct {
	mu          sync.Mutex
	calls       map[string]int
	rateLimited map[string]int
}

type methodKey struct{}

func (r *rpcStats) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, methodKey{}, path.Base(info.FullMethodName))
}
func (r *rpcStats) HandleRPC(ctx context.Context, s stats.RPCStats) {
	end, ok := s.(*stats.End)
	if !ok {
		return
	}
	m, _ := ctx.Value(methodKey{}).(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls, r.rateLimited = map[string]int{}, map[string]int{}
	}
	r.calls[m]++
	if status.Code(end.Error) == codes.ResourceExhausted {
		r.rateLimited[m]++
	}
}
func (r *rpcStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (r *rpcStats) HandleConn(context.Context, stats.ConnStats)                       {}

func (r *rpcStats) snapshot() (map[string]int, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, limited := map[string]int{}, map[string]int{}
	for m, n := range r.calls {
		calls[m] = n
	}
	for m, n := range r.rateLimited {
		limited[m] = n
	}
	return calls, limited
}

// StartKubelet starts the device manager and the PodResources server.
func StartKubelet(ctx context.Context) (*Kubelet, error) {
	k := &Kubelet{pods: map[types.UID]*v1.Pod{}, inactive: map[types.UID]string{}}
	if err := k.start(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Kubelet) start(ctx context.Context) error {
	// Kubelet's container manager builds the topology manager first and gives it to the device
	// manager as its affinity store; with policy none the affinity is empty.
	tm, err := topologymanager.NewManager(nil, topologymanager.PolicyNone, topologymanager.ContainerTopologyScope, nil)
	if err != nil {
		return err
	}
	dm, err := devicemanager.NewManagerImpl(nil, tm)
	if err != nil {
		return err
	}
	tm.AddHintProvider(klog.FromContext(ctx), dm)
	if err := dm.Start(klog.FromContext(ctx), k.GetActivePods, readySources{}, containermap.NewContainerMap(), sets.New[string]()); err != nil {
		return fmt.Errorf("device manager: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(PodResourcesSocket), 0o750); err != nil {
		return err
	}
	_ = os.Remove(PodResourcesSocket)
	l, err := net.Listen("unix", PodResourcesSocket)
	if err != nil {
		return err
	}
	pr := grpc.NewServer(apisgrpc.WithRateLimiter(ctx, "podresources", podresources.DefaultQPS, podresources.DefaultBurstTokens),
		grpc.StatsHandler(&k.prStats))
	podresourcesapi.RegisterPodResourcesListerServer(pr, podresources.NewV1PodResourcesServer(ctx, podresources.PodResourcesProviders{
		Pods: k, Devices: devicesProvider{dm}, Cpus: noCPUs{}, Memory: noMemory{}, DynamicResources: noDRA{},
	}))
	go func() { _ = pr.Serve(l) }()
	k.mu.Lock()
	k.dm, k.tm, k.pr = dm, tm, pr
	k.mu.Unlock()
	return nil
}

// Stop stops the device manager (disconnecting every plugin) and the PodResources server.
func (k *Kubelet) Stop(ctx context.Context) {
	k.mu.Lock()
	dm, pr := k.dm, k.pr
	k.mu.Unlock()
	if pr != nil {
		pr.Stop()
	}
	if dm != nil {
		_ = dm.Stop(klog.FromContext(ctx))
	}
}

// Restart is a kubelet restart as the device plugins see it: every connection drops, a new device
// manager starts (its plugin server wipes every socket in the plugin directory but the checkpoint,
// then listens on kubelet.sock again) and reloads its allocations from the checkpoint. The pod
// manager keeps its pods, as kubelet relearns them from the API server.
func (k *Kubelet) Restart(ctx context.Context) error {
	k.Stop(ctx)
	return k.start(ctx)
}

// Manager is the running device manager (for the checks of a test).
func (k *Kubelet) Manager() *devicemanager.ManagerImpl {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dm
}

// AdmitResult is kubelet's admission verdict for one pod.
type AdmitResult struct {
	Pod     *v1.Pod
	Admit   bool
	Reason  string
	Message string
}

// HandlePodAdditions plays kubelet's HandlePodAdditions for one batch of new pods: it sorts them by
// creation time, then for each in turn adds it to the pod manager and runs admission (the Topology
// Manager admit handler, which calls the device manager's Allocate per container, init containers
// first). A rejected pod leaves the active pods, as kubelet fails it. The other admit handlers of
// kubelet (node resources, eviction, sysctls, ...) are not run.
func (k *Kubelet) HandlePodAdditions(pods []*v1.Pod) []AdmitResult {
	pods = append([]*v1.Pod(nil), pods...)
	sort.Sort(sliceutils.PodsByCreationTime(pods))
	var out []AdmitResult
	for _, pod := range pods {
		k.mu.Lock()
		k.pods[pod.UID] = pod
		tm := k.tm
		k.mu.Unlock()
		r := tm.Admit(&lifecycle.PodAdmitAttributes{Pod: pod, OtherPods: k.otherActive(pod.UID), Operation: lifecycle.AddOperation})
		if !r.Admit {
			k.mu.Lock()
			k.inactive[pod.UID] = r.Reason
			k.mu.Unlock()
		}
		out = append(out, AdmitResult{Pod: pod, Admit: r.Admit, Reason: r.Reason, Message: r.Message})
	}
	return out
}

// Terminate makes a pod terminal: it leaves the active pods, so the device manager frees its devices
// at its next UpdateAllocatedDevices (every allocation and every PodResources List calls it).
func (k *Kubelet) Terminate(uid types.UID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inactive[uid] = "Terminated"
}

// Devices is what kubelet gives one container of an admitted pod.
type Devices struct {
	// Env is the container's environment from the device manager's run options (the backend's
	// Allocate response as kubelet applies it), name=value.
	Env map[string]string
	// IDs is kubelet's own record of the container's device IDs for the resource (GetDevices), sorted.
	IDs []string
}

// ContainerDevices reads back what the device manager holds for a container: the run options a
// container start would get (GetDeviceRunContainerOptions, which also issues PreStartContainer when
// the plugin asks for it) and the device IDs kubelet recorded.
func (k *Kubelet) ContainerDevices(ctx context.Context, pod *v1.Pod, container, resource string) (Devices, error) {
	dm := k.Manager()
	var c *v1.Container
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == container {
			c = &pod.Spec.InitContainers[i]
		}
	}
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == container {
			c = &pod.Spec.Containers[i]
		}
	}
	if c == nil {
		return Devices{}, fmt.Errorf("pod %s has no container %q", pod.Name, container)
	}
	opts, err := dm.GetDeviceRunContainerOptions(ctx, pod, c)
	if err != nil {
		return Devices{}, err
	}
	d := Devices{Env: map[string]string{}}
	if opts != nil {
		for _, e := range opts.Envs {
			d.Env[e.Name] = e.Value
		}
	}
	for id := range dm.GetDevices(string(pod.UID), container)[resource] {
		d.IDs = append(d.IDs, id)
	}
	sort.Strings(d.IDs)
	return d, nil
}

// GetActivePods is kubelet's GetActivePods: the pods of the pod manager that are not terminal or rejected.
func (k *Kubelet) GetActivePods() []*v1.Pod {
	return k.otherActive("")
}

func (k *Kubelet) otherActive(except types.UID) []*v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*v1.Pod
	for uid, p := range k.pods {
		if _, gone := k.inactive[uid]; !gone && uid != except {
			out = append(out, p)
		}
	}
	sort.Sort(sliceutils.PodsByCreationTime(out))
	return out
}

// GetPods is the pod manager's list (PodResources' PodsProvider).
func (k *Kubelet) GetPods() []*v1.Pod {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []*v1.Pod
	for _, p := range k.pods {
		out = append(out, p)
	}
	sort.Sort(sliceutils.PodsByCreationTime(out))
	return out
}

// GetPodByName is the pod manager's lookup (PodResources Get).
func (k *Kubelet) GetPodByName(namespace, name string) (*v1.Pod, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range k.pods {
		if p.Namespace == namespace && p.Name == name {
			return p, true
		}
	}
	return nil, false
}

type readySources struct{}

func (readySources) AddSource(string) {}
func (readySources) AllReady() bool   { return true }

// devicesProvider adapts the device manager to PodResources as kubelet's container manager does
// (pkg/kubelet/cm/container_manager.go, containerDevicesFromResourceDeviceInstances): one
// ContainerDevices per device and NUMA node.
type devicesProvider struct{ dm *devicemanager.ManagerImpl }

func (d devicesProvider) UpdateAllocatedDevices() { d.dm.UpdateAllocatedDevices() }
func (d devicesProvider) GetDevices(podUID, container string) []*podresourcesapi.ContainerDevices {
	return toContainerDevices(d.dm.GetDevices(podUID, container))
}
func (d devicesProvider) GetAllocatableDevices() []*podresourcesapi.ContainerDevices {
	return toContainerDevices(d.dm.GetAllocatableDevices())
}

func toContainerDevices(devs devicemanager.ResourceDeviceInstances) []*podresourcesapi.ContainerDevices {
	var out []*podresourcesapi.ContainerDevices
	for resource, byID := range devs {
		for id, dev := range byID {
			if dev.GetTopology() == nil {
				out = append(out, &podresourcesapi.ContainerDevices{ResourceName: resource, DeviceIds: []string{id}})
				continue
			}
			for _, n := range dev.GetTopology().GetNodes() {
				out = append(out, &podresourcesapi.ContainerDevices{ResourceName: resource, DeviceIds: []string{id},
					Topology: &podresourcesapi.TopologyInfo{Nodes: []*podresourcesapi.NUMANode{{ID: n.GetID()}}}})
			}
		}
	}
	return out
}

type noCPUs struct{}

func (noCPUs) GetCPUs(string, string) []int64 { return nil }
func (noCPUs) GetAllocatableCPUs() []int64    { return nil }

type noMemory struct{}

func (noMemory) GetMemory(string, string) []*podresourcesapi.ContainerMemory { return nil }
func (noMemory) GetAllocatableMemory() []*podresourcesapi.ContainerMemory    { return nil }

type noDRA struct{}

func (noDRA) GetDynamicResources(*v1.Pod, *v1.Container) []*podresourcesapi.DynamicResource {
	return nil
}

// SortedIDs returns the IDs of a comma-separated list, sorted ("" gives none).
func SortedIDs(list string) []string {
	if list == "" {
		return nil
	}
	ids := strings.Split(list, ",")
	sort.Strings(ids)
	return ids
}
