package nodesim

import (
	"context"
	"fmt"
	"github.com/fsnotify/fsnotify"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/klog/v2"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	plugin "k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/plugin/v1beta1"
)

// GPUResource is the resource every backend here serves.
const GPUResource = "nvidia.com/gpu"

// VisibleDevicesEnv is the variable the backend's Allocate sets, as the NVIDIA plugin does.
const VisibleDevicesEnv = "NVIDIA_VISIBLE_DEVICES"

// PreferFunc answers GetPreferredAllocation for the backend: the available IDs, the IDs that must be
// included, and the size; it returns the preferred IDs.
type PreferFunc func(available, mustInclude []string, size int) []string

// Backend is upstream's stub device plugin (plugin/v1beta1/stub.go) standing in for the NVIDIA plugin:
// healthy GPUs with UUID-like IDs; Allocate answers NVIDIA_VISIBLE_DEVICES=<the IDs kubelet passed>
// (what NVIDIA's plugin does with DEVICE_LIST_STRATEGY=envvar); GetPreferredAllocation is advertised
// and answered by a PreferFunc.
type Backend struct {
	Socket   string // its DevicePlugin socket
	Register string // the Registration socket it registers to (kubelet's, or topofit's registrar)
	IDs      []string

	// Stub is the running plugin process; Up replaces it (under mu: while Down and Up may run,
	// reach it through Restart, Down and Up).
	Stub *plugin.Stub

	prefer PreferFunc
	mu     sync.Mutex
}

// GPUIDs returns n fake GPU UUIDs, GPU-00000000-0000-0000-0000-0000000000NN.
func GPUIDs(n int) []string {
	var ids []string
	for i := 0; i < n; i++ {
		ids = append(ids, fmt.Sprintf("GPU-00000000-0000-0000-0000-%012d", i))
	}
	return ids
}

// StartBackend serves the stub on socket (in DevicePluginDir), registers it to registerTo as
// nvidia.com/gpu, and re-registers whenever registerTo is created again. prefer may be nil: the
// stub's default answer (no preference).
func StartBackend(ctx context.Context, socket, registerTo string, ids []string, prefer PreferFunc) (*Backend, error) {
	logger := klog.FromContext(ctx)
	b := &Backend{Socket: socket, Register: registerTo, IDs: ids, prefer: prefer}
	if err := b.Up(ctx); err != nil {
		return nil, err
	}
	// Re-register whenever registerTo is created again (a restarted kubelet or topofit node), at
	// once, as the NVIDIA plugin does (its inotify watch on the socket's directory). The stub's own
	// Watch does the same after a fixed 10 s wait and panics on a failed registration.
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(filepath.Dir(registerTo)); err != nil {
		w.Close()
		return nil, err
	}
	go func() {
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Name != registerTo || ev.Op&fsnotify.Create == 0 {
					continue
				}
				logger.Info("backend: registration socket created, restarting and registering", "socket", registerTo)
				for attempt := 1; attempt <= 5; attempt++ {
					stub := b.current()
					err := stub.Restart(ctx)
					if err == nil {
						err = stub.Register(ctx, registerTo, GPUResource, "")
					}
					if err == nil {
						break
					}
					logger.Error(err, "backend: restart and register", "attempt", attempt)
					time.Sleep(200 * time.Millisecond)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				logger.Error(err, "backend: inotify")
			}
		}
	}()
	return b, nil
}

func (b *Backend) current() *plugin.Stub {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Stub
}

// Down is the plugin process exiting: its server stops (every stream to it breaks) and its socket
// is removed. Up (a new process) brings it back.
func (b *Backend) Down(ctx context.Context) error {
	return b.current().Stop(klog.FromContext(ctx))
}

// Up starts a new plugin process: a new stub serves on Socket and registers to Register.
func (b *Backend) Up(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	var devs []*pluginapi.Device
	for _, id := range b.IDs {
		devs = append(devs, &pluginapi.Device{ID: id, Health: pluginapi.Healthy})
	}
	prefer := b.prefer
	socket, registerTo := b.Socket, b.Register
	stub := plugin.NewDevicePluginStub(logger, devs, socket, GPUResource, false, true)
	stub.SetAllocFunc(func(r *pluginapi.AllocateRequest, devs map[string]*pluginapi.Device) (*pluginapi.AllocateResponse, error) {
		resp := &pluginapi.AllocateResponse{}
		for _, c := range r.ContainerRequests {
			for _, id := range c.DevicesIds {
				if _, ok := devs[id]; !ok {
					return nil, fmt.Errorf("unknown device %q", id)
				}
			}
			resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
				Envs: map[string]string{VisibleDevicesEnv: strings.Join(c.DevicesIds, ",")},
			})
		}
		return resp, nil
	})
	if prefer != nil {
		stub.SetGetPreferredAllocFunc(func(r *pluginapi.PreferredAllocationRequest, _ map[string]*pluginapi.Device) (*pluginapi.PreferredAllocationResponse, error) {
			resp := &pluginapi.PreferredAllocationResponse{}
			for _, c := range r.ContainerRequests {
				resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{
					DeviceIDs: prefer(c.AvailableDeviceIDs, c.MustIncludeDeviceIDs, int(c.AllocationSize)),
				})
			}
			return resp, nil
		})
	}
	if err := stub.Start(ctx); err != nil {
		return fmt.Errorf("backend stub: %w", err)
	}
	b.mu.Lock()
	b.Stub = stub
	b.mu.Unlock()
	if err := stub.Register(ctx, registerTo, GPUResource, ""); err != nil {
		return fmt.Errorf("backend stub: register to %s: %w", registerTo, err)
	}
	return nil
}

// Restart is a restart of the plugin process as its peers see it: its server stops (every stream
// to it breaks), serves again on a fresh socket, and registers again.
func (b *Backend) Restart(ctx context.Context) error {
	stub := b.current()
	if err := stub.Restart(ctx); err != nil {
		return err
	}
	return stub.Register(ctx, b.Register, GPUResource, "")
}

// PreferLast is a deterministic preference unlike any fill order: must_include, then the
// lexicographically last available IDs up to size.
func PreferLast(available, mustInclude []string, size int) []string {
	avail := append([]string(nil), available...)
	sort.Sort(sort.Reverse(sort.StringSlice(avail)))
	return preferInOrder(avail, mustInclude, size)
}

// PreferFirst is the mirror of PreferLast (the lexicographically first IDs): the backend's own,
// topology-blind answer in the scenarios with topofit in front.
func PreferFirst(available, mustInclude []string, size int) []string {
	avail := append([]string(nil), available...)
	sort.Strings(avail)
	return preferInOrder(avail, mustInclude, size)
}

// preferInOrder is must_include, then the IDs of ordered not yet in it, up to size.
func preferInOrder(ordered, mustInclude []string, size int) []string {
	out := append([]string(nil), mustInclude...)
	in := map[string]bool{}
	for _, id := range mustInclude {
		in[id] = true
	}
	for _, id := range ordered {
		if len(out) >= size {
			break
		}
		if !in[id] {
			out = append(out, id)
			in[id] = true
		}
	}
	return out
}
