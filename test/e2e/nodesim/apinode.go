package nodesim

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// APINode is kubelet's pod lifecycle for one node against a real kube-apiserver, around a Kubelet:
//   - it watches the pods bound to the node (field selector spec.nodeName, as kubelet's API source);
//   - new pods are admitted in deliveries: whatever arrived since the last delivery goes to
//     HandlePodAdditions at once (sorted by creation time there), one delivery after another;
//   - an admitted pod is set Running, a rejected one Failed with kubelet's reason and message
//     (status updates on a queue of their own, as kubelet's status manager);
//   - a pod deleted from the API server, or ended through Exit (its containers exit 0: Succeeded),
//     leaves the active pods, so the device manager frees its devices.
//
// Pause holds new pods back (kubelet's sync loop busy); they are admitted in one delivery on resume.
// Pods that end before they are admitted are never admitted.
type APINode struct {
	k      *Kubelet
	client kubernetes.Interface
	node   string

	mu       sync.Mutex
	queue    []*v1.Pod
	seen     map[types.UID]bool
	ended    map[types.UID]bool
	paused   bool
	admitted []Admission
	wake     chan struct{}
	statuses chan statusUpdate
}

// Admission is one pod's admission on the node, as kubelet decided it.
type Admission struct {
	Namespace, Name string
	UID             types.UID
	Admit           bool
	Reason, Message string
	// At is when the device manager was done with the pod (its Allocate calls returned).
	At time.Time
	// Pod is the object as admitted (its annotations: the plan kubelet's device plugin saw).
	Pod *v1.Pod `json:"-"`
}

type statusUpdate struct {
	pod             *v1.Pod
	phase           v1.PodPhase
	reason, message string
}

// StartAPINode starts watching and admitting; it returns once the watch has synced. It stops with ctx.
func StartAPINode(ctx context.Context, k *Kubelet, client kubernetes.Interface, node string) (*APINode, error) {
	n := &APINode{k: k, client: client, node: node, seen: map[types.UID]bool{}, ended: map[types.UID]bool{},
		wake: make(chan struct{}, 1), statuses: make(chan statusUpdate, 1024)}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "spec.nodeName=" + node
	}))
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { n.observe(obj.(*v1.Pod)) },
		UpdateFunc: func(_, obj any) { n.observe(obj.(*v1.Pod)) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				n.end(p.UID)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("node %s: pod watch did not sync", node)
	}
	go n.admitLoop(ctx)
	go n.statusLoop(ctx)
	return n, nil
}

func (n *APINode) observe(p *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	terminal := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	if terminal || p.DeletionTimestamp != nil {
		// Ended elsewhere (or deleted gracefully: there are no containers to stop).
		if n.seen[p.UID] && !n.ended[p.UID] {
			n.ended[p.UID] = true
			n.k.Terminate(p.UID)
		}
		return
	}
	if n.seen[p.UID] {
		return
	}
	n.seen[p.UID] = true
	n.queue = append(n.queue, p)
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *APINode) end(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.ended[uid] {
		n.ended[uid] = true
		n.k.Terminate(uid)
	}
}

func (n *APINode) admitLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.wake:
		}
		n.mu.Lock()
		if n.paused {
			n.mu.Unlock()
			continue
		}
		var batch []*v1.Pod
		for _, p := range n.queue {
			if !n.ended[p.UID] {
				batch = append(batch, p)
			}
		}
		n.queue = nil
		n.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		// HandlePodAdditions of the whole delivery is this loop: sorted by creation time, then one
		// pod after another. Each pod goes alone so that its own admission is timed.
		sort.Sort(podsByCreation(batch))
		for _, p := range batch {
			r := n.k.HandlePodAdditions([]*v1.Pod{p})[0]
			a := Admission{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Admit: r.Admit, Reason: r.Reason,
				Message: r.Message, At: time.Now(), Pod: p}
			n.mu.Lock()
			n.admitted = append(n.admitted, a)
			n.mu.Unlock()
			su := statusUpdate{pod: p, phase: v1.PodRunning}
			if !r.Admit {
				su = statusUpdate{pod: p, phase: v1.PodFailed, reason: r.Reason, message: r.Message}
			}
			n.statuses <- su
		}
	}
}

type podsByCreation []*v1.Pod

func (s podsByCreation) Len() int      { return len(s) }
func (s podsByCreation) Swap(i, j int) { s[i], s[j] = s[j], s[i] }
func (s podsByCreation) Less(i, j int) bool {
	return s[i].CreationTimestamp.Before(&s[j].CreationTimestamp)
}

func (n *APINode) statusLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case su := <-n.statuses:
			if err := n.setPhase(ctx, su); err != nil && !apierrors.IsNotFound(err) && ctx.Err() == nil {
				klog.FromContext(ctx).Error(err, "pod status", "pod", su.pod.Namespace+"/"+su.pod.Name, "phase", su.phase)
			}
		}
	}
}

// setPhase writes the pod's phase with container states to match, as kubelet's status manager does.
func (n *APINode) setPhase(ctx context.Context, su statusUpdate) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := n.client.CoreV1().Pods(su.pod.Namespace).Get(ctx, su.pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.UID != su.pod.UID {
			return nil // re-created under the name: not ours
		}
		now := metav1.Now()
		p.Status.Phase, p.Status.Reason, p.Status.Message = su.phase, su.reason, su.message
		if p.Status.StartTime == nil {
			p.Status.StartTime = &now
		}
		ready := v1.ConditionFalse
		if su.phase == v1.PodRunning {
			ready = v1.ConditionTrue
		}
		p.Status.Conditions = []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: now},
			{Type: v1.ContainersReady, Status: ready, LastTransitionTime: now},
			{Type: v1.PodReady, Status: ready, LastTransitionTime: now},
		}
		p.Status.ContainerStatuses = nil
		for _, c := range p.Spec.Containers {
			cs := v1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: su.phase == v1.PodRunning}
			switch su.phase {
			case v1.PodRunning:
				cs.State.Running = &v1.ContainerStateRunning{StartedAt: now}
			case v1.PodSucceeded:
				cs.State.Terminated = &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", FinishedAt: now}
			}
			if su.phase != v1.PodFailed {
				p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, cs)
			}
		}
		_, err = n.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		return err
	})
}

// Pause holds new pods back (true) or admits what arrived meanwhile and resumes (false).
func (n *APINode) Pause(on bool) {
	n.mu.Lock()
	n.paused = on
	n.mu.Unlock()
	if !on {
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
}

// Exit ends an admitted pod as when its containers exit 0: it leaves the active pods, then its
// status says Succeeded. It returns when the device manager was told.
func (n *APINode) Exit(ctx context.Context, namespace, name string) (time.Time, error) {
	n.mu.Lock()
	var adm *Admission
	for i := range n.admitted {
		if a := &n.admitted[i]; a.Namespace == namespace && a.Name == name && !n.ended[a.UID] {
			adm = a
		}
	}
	if adm == nil {
		n.mu.Unlock()
		return time.Time{}, fmt.Errorf("%s/%s is not running on %s", namespace, name, n.node)
	}
	n.ended[adm.UID] = true
	n.k.Terminate(adm.UID)
	at := time.Now()
	pod := adm.Pod
	n.mu.Unlock()
	n.statuses <- statusUpdate{pod: pod, phase: v1.PodSucceeded, reason: "", message: ""}
	return at, nil
}

// Admissions returns every admission so far, in order.
func (n *APINode) Admissions() []Admission {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Admission(nil), n.admitted...)
}

// Running reports whether the pod with uid was admitted and has not ended.
func (n *APINode) Running(uid types.UID) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ended[uid] {
		return false
	}
	for _, a := range n.admitted {
		if a.UID == uid {
			return a.Admit
		}
	}
	return false
}
