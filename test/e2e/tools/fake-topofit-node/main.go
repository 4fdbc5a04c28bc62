// Command fake-topofit-node is a stand-in for `topofit node` with the command line that
// tests/fidelity_topofit_test.go uses (`node --node-name N --device-plugin-dir D --registrar-socket R
// --pods-file F --pod-resources-socket P`) and the interposer contract of docs/node-fidelity.md: it
// serves a Registration socket the backend registers to, registers itself to kubelet.sock as
// nvidia.com/gpu, relays ListAndWatch and forwards Allocate and PreStartContainer unchanged, and
// answers GetPreferredAllocation from the pods' topofit.io/gpu-plan (from --pods-file, or a pod watch
// through --kubeconfig): the planned containers of the
// request's size whose set fits (must_include inside it, the rest available), that are the next GPU
// container of their pod and not yet allocated, narrowed by PodResources Get (kubelet knows only the
// pod it is admitting; a not-found is code Unknown), then by creation time; none: the backend's answer, offered
// only the GPUs no pending plan names when those are enough. It
// re-creates its sockets when kubelet.sock is created again. It exists to prove the fidelity
// scenarios before the C++ `topofit node` is there, and what they catch (--no-get drops the Get
// narrowing):
//
//	go build -o /tmp/fake-topofit-node ./tools/fake-topofit-node
//	TOPOFIT_NODE_BINARY=/tmp/fake-topofit-node ./run.sh -run TestFidelityTopofitNode
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	podresourcesapi "k8s.io/kubelet/pkg/apis/podresources/v1"
)

type options struct {
	node, dir, kubelet, registrar, front, podsFile, podResources, resource, kubeconfig string
	noGet                                                                              bool
}

func main() {
	if len(os.Args) < 2 || os.Args[1] != "node" {
		fmt.Fprintln(os.Stderr, "usage: fake-topofit-node node --node-name N [--device-plugin-dir D] [--registrar-socket R] --pods-file F [--pod-resources-socket P] [--no-get]")
		os.Exit(2)
	}
	var o options
	fs := flag.NewFlagSet("node", flag.ExitOnError)
	fs.StringVar(&o.node, "node-name", "", "this node")
	fs.StringVar(&o.dir, "device-plugin-dir", "/var/lib/kubelet/device-plugins", "kubelet's device-plugin directory")
	fs.StringVar(&o.kubelet, "kubelet-socket", "kubelet.sock", "kubelet's Registration socket (in --device-plugin-dir)")
	fs.StringVar(&o.registrar, "registrar-socket", "topofit-registrar.sock", "the Registration socket the backend registers to")
	fs.StringVar(&o.front, "front-socket", "topofit-nvidia-gpu.sock", "the DevicePlugin socket kubelet dials")
	fs.StringVar(&o.podsFile, "pods-file", "", "pods and plans (a PodList), re-read when it changes")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "watch the pods bound to --node-name through this kubeconfig instead of --pods-file")
	fs.StringVar(&o.podResources, "pod-resources-socket", "/var/lib/kubelet/pod-resources/kubelet.sock", "kubelet's PodResources socket")
	fs.StringVar(&o.resource, "resource-name", "nvidia.com/gpu", "the resource served")
	fs.BoolVar(&o.noGet, "no-get", false, "do not narrow candidates with PodResources Get (shows what the scenarios catch)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: fake-topofit-node node [flags]")
		fs.VisitAll(func(f *flag.Flag) { fmt.Fprintf(os.Stderr, "  --%s\t%s\n", f.Name, f.Usage) })
	}
	_ = fs.Parse(os.Args[2:])
	if o.node == "" || (o.podsFile == "") == (o.kubeconfig == "") {
		log.Fatal("--node-name and one of --pods-file, --kubeconfig are required")
	}
	s := &server{o: o, allocated: map[string]bool{}}
	if o.podsFile != "" {
		go s.watchPods()
	} else {
		s.watchAPI()
	}
	s.serveRegistrar()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Add(o.dir); err != nil {
		log.Fatal(err)
	}
	for ev := range w.Events {
		if ev.Name == filepath.Join(o.dir, o.kubelet) && ev.Op&fsnotify.Create != 0 {
			log.Printf("kubelet.sock created: re-creating the registrar; the backend re-registers, then we register to kubelet")
			s.serveRegistrar()
		}
	}
}

type container struct {
	name string
	ids  []string // sorted
}

type plannedPod struct {
	uid, namespace, name string
	created              time.Time
	containers           []container // GPU containers in spec order
}

type server struct {
	o options

	mu        sync.Mutex
	pods      []plannedPod
	allocated map[string]bool // uid/container
	registrar *grpc.Server
	front     *grpc.Server
	backend   pluginapi.DevicePluginClient
	backendOK *pluginapi.DevicePluginOptions

	pluginapi.UnsafeRegistrationServer
	pluginapi.UnsafeDevicePluginServer
}

func (s *server) watchPods() {
	var last time.Time
	for {
		if st, err := os.Stat(s.o.podsFile); err == nil && !st.ModTime().Equal(last) {
			last = st.ModTime()
			s.loadPods()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *server) loadPods() {
	data, err := os.ReadFile(s.o.podsFile)
	if err != nil {
		log.Printf("pods file: %v", err)
		return
	}
	var list corev1.PodList
	if err := json.Unmarshal(data, &list); err != nil {
		log.Printf("pods file: %v", err)
		return
	}
	s.setPods(list.Items)
}

// watchAPI keeps the pods bound to the node from the API server (an informer: list, then watch).
func (s *server) watchAPI() {
	cfg, err := clientcmd.BuildConfigFromFlags("", s.o.kubeconfig)
	if err != nil {
		log.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName=" + s.o.node
	}))
	inf := f.Core().V1().Pods()
	lister := inf.Lister()
	resync := func() {
		pods, err := lister.List(labels.Everything())
		if err != nil {
			return
		}
		var items []corev1.Pod
		for _, p := range pods {
			items = append(items, *p)
		}
		s.setPods(items)
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { resync() }, UpdateFunc: func(any, any) { resync() }, DeleteFunc: func(any) { resync() },
	})
	f.Start(make(chan struct{}))
}

// setPods replaces the planned pods with those of items that are on the node, not terminal, with a
// plan for the node.
func (s *server) setPods(items []corev1.Pod) {
	var pods []plannedPod
	for _, p := range items {
		if p.Spec.NodeName != s.o.node || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		var plan struct {
			V          int                 `json:"v"`
			Node       string              `json:"node"`
			Containers map[string][]string `json:"containers"`
		}
		if err := json.Unmarshal([]byte(p.Annotations["topofit.io/gpu-plan"]), &plan); err != nil || plan.V != 1 || plan.Node != s.o.node {
			continue
		}
		pp := plannedPod{uid: string(p.UID), namespace: p.Namespace, name: p.Name, created: p.CreationTimestamp.Time}
		for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
			if ids, ok := plan.Containers[c.Name]; ok {
				ids = append([]string(nil), ids...)
				sort.Strings(ids)
				pp.containers = append(pp.containers, container{c.Name, ids})
			}
		}
		pods = append(pods, pp)
	}
	s.mu.Lock()
	s.pods = pods
	s.mu.Unlock()
	log.Printf("pods: %d planned on %s", len(pods), s.o.node)
}

// serveRegistrar (re)creates the Registration socket the backend registers to.
func (s *server) serveRegistrar() {
	path := filepath.Join(s.o.dir, s.o.registrar)
	s.mu.Lock()
	if s.registrar != nil {
		s.registrar.Stop()
	}
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		s.mu.Unlock()
		log.Fatalf("registrar: %v", err)
	}
	g := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(g, s)
	s.registrar = g
	s.mu.Unlock()
	go func() { _ = g.Serve(l) }()
	log.Printf("registrar: serving %s", path)
}

func dialUnix(ctx context.Context, path string) (*grpc.ClientConn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return grpc.DialContext(ctx, path, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithBlock(),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", addr)
		}))
}

// Register: the backend registered; dial it, then serve the front socket and register to kubelet.
func (s *server) Register(ctx context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	conn, err := dialUnix(context.Background(), filepath.Join(s.o.dir, r.Endpoint))
	if err != nil {
		return nil, fmt.Errorf("dial backend %s: %w", r.Endpoint, err)
	}
	backend := pluginapi.NewDevicePluginClient(conn)
	opts, err := backend.GetDevicePluginOptions(ctx, &pluginapi.Empty{})
	if err != nil {
		return nil, err
	}
	path := filepath.Join(s.o.dir, s.o.front)
	s.mu.Lock()
	s.backend, s.backendOK = backend, opts
	if s.front != nil {
		s.front.Stop()
	}
	_ = os.Remove(path)
	l, err := net.Listen("unix", path)
	if err != nil {
		s.mu.Unlock()
		return nil, err
	}
	g := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(g, s)
	s.front = g
	s.mu.Unlock()
	go func() { _ = g.Serve(l) }()
	log.Printf("backend %s registered; front on %s", r.Endpoint, path)
	go func() { // after answering the backend: register to kubelet, which dials the front back
		kc, err := dialUnix(context.Background(), filepath.Join(s.o.dir, s.o.kubelet))
		if err != nil {
			log.Printf("kubelet: %v", err)
			return
		}
		defer kc.Close()
		_, err = pluginapi.NewRegistrationClient(kc).Register(context.Background(), &pluginapi.RegisterRequest{
			Version: pluginapi.Version, Endpoint: s.o.front, ResourceName: s.o.resource,
			Options: &pluginapi.DevicePluginOptions{PreStartRequired: opts.PreStartRequired, GetPreferredAllocationAvailable: true}})
		log.Printf("registered to kubelet: %v", err)
	}()
	return &pluginapi.Empty{}, nil
}

func (s *server) client() pluginapi.DevicePluginClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.backend
}

func (s *server) GetDevicePluginOptions(ctx context.Context, _ *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &pluginapi.DevicePluginOptions{PreStartRequired: s.backendOK.PreStartRequired, GetPreferredAllocationAvailable: true}, nil
}

func (s *server) ListAndWatch(e *pluginapi.Empty, stream pluginapi.DevicePlugin_ListAndWatchServer) error {
	in, err := s.client().ListAndWatch(stream.Context(), e)
	if err != nil {
		return err
	}
	for {
		m, err := in.Recv()
		if err != nil {
			return err
		}
		if err := stream.Send(m); err != nil {
			return err
		}
	}
}

func (s *server) Allocate(ctx context.Context, r *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp, err := s.client().Allocate(ctx, r)
	if err != nil {
		return nil, err
	}
	// Record which planned container got exactly this set (planned sets are disjoint but for an
	// init container's, which its app container repeats: the first unallocated one in spec order).
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range r.ContainerRequests {
		got := append([]string(nil), c.DevicesIds...)
		sort.Strings(got)
	match:
		for _, p := range s.pods {
			for _, pc := range p.containers {
				if !s.allocated[p.uid+"/"+pc.name] && equal(pc.ids, got) {
					s.allocated[p.uid+"/"+pc.name] = true
					break match
				}
			}
		}
	}
	return resp, nil
}

func (s *server) PreStartContainer(ctx context.Context, r *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return s.client().PreStartContainer(ctx, r)
}

func (s *server) GetPreferredAllocation(ctx context.Context, r *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range r.ContainerRequests {
		if ids := s.match(ctx, c); ids != nil {
			resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
			continue
		}
		b, err := s.client().GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{s.offPlans(c)}})
		if err != nil || len(b.ContainerResponses) == 0 {
			resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{})
			continue
		}
		resp.ContainerResponses = append(resp.ContainerResponses, b.ContainerResponses[0])
	}
	return resp, nil
}

// offPlans is the request for the backend when no plan matched: available less every GPU planned
// for a pending container, when that still leaves the size.
func (s *server) offPlans(c *pluginapi.ContainerPreferredAllocationRequest) *pluginapi.ContainerPreferredAllocationRequest {
	s.mu.Lock()
	reserved := map[string]bool{}
	for _, p := range s.pods {
		for _, pc := range p.containers {
			if !s.allocated[p.uid+"/"+pc.name] {
				for _, id := range pc.ids {
					reserved[id] = true
				}
			}
		}
	}
	s.mu.Unlock()
	must := map[string]bool{}
	for _, id := range c.MustIncludeDeviceIDs {
		must[id] = true
	}
	var avail []string
	for _, id := range c.AvailableDeviceIDs {
		if must[id] || !reserved[id] {
			avail = append(avail, id)
		}
	}
	if len(avail) < int(c.AllocationSize) {
		return c
	}
	return &pluginapi.ContainerPreferredAllocationRequest{AvailableDeviceIDs: avail,
		MustIncludeDeviceIDs: c.MustIncludeDeviceIDs, AllocationSize: c.AllocationSize}
}

type candidate struct {
	pod *plannedPod
	ids []string
}

func (s *server) match(ctx context.Context, c *pluginapi.ContainerPreferredAllocationRequest) []string {
	avail := map[string]bool{}
	for _, id := range c.AvailableDeviceIDs {
		avail[id] = true
	}
	must := map[string]bool{}
	for _, id := range c.MustIncludeDeviceIDs {
		must[id] = true
	}
	s.mu.Lock()
	var cands []candidate
	for i := range s.pods {
		p := &s.pods[i]
		for _, pc := range p.containers {
			if s.allocated[p.uid+"/"+pc.name] {
				continue
			}
			// The pod's next GPU container: only it can be the one kubelet asks about.
			in := map[string]bool{}
			for _, id := range pc.ids {
				in[id] = true
			}
			fits := len(pc.ids) == int(c.AllocationSize)
			for id := range must {
				fits = fits && in[id]
			}
			for _, id := range pc.ids {
				fits = fits && (avail[id] || must[id])
			}
			if fits {
				cands = append(cands, candidate{p, pc.ids})
			}
			break
		}
	}
	s.mu.Unlock()
	// Even one candidate is checked: a foreign pod (no plan) of the same size must not take it.
	if len(cands) > 0 && !s.o.noGet {
		cands = s.narrowByGet(ctx, cands)
	}
	if len(cands) == 0 {
		return nil
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].pod.created.Before(cands[j].pod.created) })
	return cands[0].ids
}

// narrowByGet keeps the candidates whose pod kubelet knows (PodResources Get succeeds): none when
// kubelet knows none of them (the container is someone else's); all when PodResources cannot be
// reached or stays rate-limited past the deadline.
func (s *server) narrowByGet(ctx context.Context, cands []candidate) []candidate {
	conn, err := dialUnix(ctx, s.o.podResources)
	if err != nil {
		return cands
	}
	defer conn.Close()
	pr := podresourcesapi.NewPodResourcesListerClient(conn)
	var known []candidate
	for _, c := range cands {
		// Kubelet rate-limits PodResources (100 QPS, burst 10; ResourceExhausted past it): a burst of
		// admissions spends the burst, so wait for tokens within the deadline. Any other error
		// (a pod kubelet does not know is code Unknown, not NotFound) means not known.
		cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		var err error
		for {
			_, err = pr.Get(cctx, &podresourcesapi.GetPodResourcesRequest{PodName: c.pod.name, PodNamespace: c.pod.namespace})
			if status.Code(err) != codes.ResourceExhausted || cctx.Err() != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		switch status.Code(err) {
		case codes.OK:
			known = append(known, c)
		case codes.ResourceExhausted, codes.Unavailable, codes.DeadlineExceeded:
			return cands // no answer: keep them all
		default:
			log.Printf("Get %s/%s: %v", c.pod.namespace, c.pod.name, err)
		}
	}
	return known
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
