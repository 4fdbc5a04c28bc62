package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// Well-known names topofit reads and writes.
const (
	GPUResource        corev1.ResourceName = "nvidia.com/gpu"
	AnnotationTopology                     = "topofit.io/gpu-topology"
	AnnotationGPUIDs                       = "topofit.io/gpu-ids"
	AnnotationPolicy                       = "topofit.io/topology-policy"
	LabelGPUProduct                        = "nvidia.com/gpu.product"
	LabelGPUCount                          = "nvidia.com/gpu.count"
	pollInterval                           = 100 * time.Millisecond
	DefaultWait                            = 60 * time.Second
)

// NodeSpec describes a fake node: a Node object with capacity and a Ready condition, no kubelet.
type NodeSpec struct {
	Name        string
	GPUs        int
	CPU         string // default "64"
	Memory      string // default "512Gi"
	Pods        string // default "110"
	Labels      map[string]string
	Annotations map[string]string
}

// GPUNode is a node with gpus GPUs whose topology is the annotation topofit.io/gpu-topology
// (a built-in profile name such as "dgx1-v100", or raw `nvidia-smi topo -m` text); "" sets none.
func GPUNode(name string, gpus int, topology string) NodeSpec {
	n := NodeSpec{Name: name, GPUs: gpus, Annotations: map[string]string{}}
	if topology != "" {
		n.Annotations[AnnotationTopology] = topology
	}
	return n
}

// GFDNode is a node described only by GPU Feature Discovery labels.
func GFDNode(name string, gpus int, product string) NodeSpec {
	return NodeSpec{Name: name, GPUs: gpus, Labels: map[string]string{
		LabelGPUProduct: product, LabelGPUCount: fmt.Sprint(gpus)}}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// NodeObject builds the Node for a spec.
func NodeObject(s NodeSpec) *corev1.Node {
	labels := map[string]string{"kubernetes.io/hostname": s.Name, "kubernetes.io/os": "linux"}
	for k, v := range s.Labels {
		labels[k] = v
	}
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(orDefault(s.CPU, "64")),
		corev1.ResourceMemory: resource.MustParse(orDefault(s.Memory, "512Gi")),
		corev1.ResourcePods:   resource.MustParse(orDefault(s.Pods, "110")),
	}
	if s.GPUs > 0 {
		res[GPUResource] = *resource.NewQuantity(int64(s.GPUs), resource.DecimalSI)
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Labels: labels, Annotations: s.Annotations},
		Status: corev1.NodeStatus{
			Capacity:    res,
			Allocatable: res.DeepCopy(),
			Phase:       corev1.NodeRunning,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "fake node of the topofit e2e suite", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
		},
	}
}

// CreateNode creates a fake node (status included) and makes sure its status stuck.
func (c *Cluster) CreateNode(ctx context.Context, s NodeSpec) (*corev1.Node, error) {
	want := NodeObject(s)
	n, err := c.Client.CoreV1().Nodes().Create(ctx, want, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create node %s: %w", s.Name, err)
	}
	if len(n.Status.Conditions) == 0 || n.Status.Allocatable.Cpu().IsZero() {
		n.Status = want.Status
		if n, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("node %s status: %w", s.Name, err)
		}
	}
	return n, nil
}

// CreateNodes creates several fake nodes or fails the test.
func (c *Cluster) CreateNodes(ctx context.Context, specs ...NodeSpec) {
	c.T.Helper()
	for _, s := range specs {
		if _, err := c.CreateNode(ctx, s); err != nil {
			c.T.Fatal(err)
		}
	}
}

// PodSpec describes a pod asking for whole GPUs.
type PodSpec struct {
	Name          string
	GPUs          int
	SchedulerName string // default SchedulerName
	Annotations   map[string]string
	Labels        map[string]string
	CPU           string // request; default "100m"
	NodeName      string // pins the pod to a node through nodeSelector kubernetes.io/hostname
	// PriorityClassName: the Priority admission plugin turns it into spec.priority, as in a cluster.
	PriorityClassName string
}

// GPUPod is a pod of the topofit-scheduler profile asking for gpus GPUs.
func GPUPod(name string, gpus int) PodSpec { return PodSpec{Name: name, GPUs: gpus} }

func nodeSelector(node string) map[string]string {
	if node == "" {
		return nil
	}
	return map[string]string{"kubernetes.io/hostname": node}
}

// PodObject builds the Pod for a spec in namespace ns.
func PodObject(ns string, s PodSpec) *corev1.Pod {
	limits := corev1.ResourceList{}
	if s.GPUs > 0 {
		limits[GPUResource] = *resource.NewQuantity(int64(s.GPUs), resource.DecimalSI)
	}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: ns, Labels: s.Labels, Annotations: s.Annotations},
		Spec: corev1.PodSpec{
			SchedulerName:                 orDefault(s.SchedulerName, SchedulerName),
			PriorityClassName:             s.PriorityClassName,
			NodeSelector:                  nodeSelector(s.NodeName),
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:  "main",
				Image: "topofit-e2e/pause", // never pulled: there is no kubelet
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(orDefault(s.CPU, "100m"))},
					Limits:   limits,
				},
			}},
		},
	}
}

// CreatePod creates a GPU pod in the cluster's namespace.
func (c *Cluster) CreatePod(ctx context.Context, s PodSpec) (*corev1.Pod, error) {
	p, err := c.Client.CoreV1().Pods(c.Namespace).Create(ctx, PodObject(c.Namespace, s), metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("create pod %s: %w", s.Name, err)
	}
	return p, nil
}

// GetPod reads a pod of the cluster's namespace.
func (c *Cluster) GetPod(ctx context.Context, name string) (*corev1.Pod, error) {
	return c.Client.CoreV1().Pods(c.Namespace).Get(ctx, name, metav1.GetOptions{})
}

// WaitForPod polls a pod until cond holds, ctx ends or timeout passes. Errors from the apiserver
// (it may be restarting) are retried.
func (c *Cluster) WaitForPod(ctx context.Context, name string, timeout time.Duration, what string,
	cond func(*corev1.Pod) bool) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *corev1.Pod
	var lastErr error
	for {
		p, err := c.GetPod(ctx, name)
		if err == nil {
			last = p
			if cond(p) {
				return p, nil
			}
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			msg := fmt.Sprintf("pod %s/%s: not %s after %v", c.Namespace, name, what, timeout)
			if last != nil {
				msg += fmt.Sprintf(" (nodeName=%q, conditions=%v)", last.Spec.NodeName, last.Status.Conditions)
			}
			if lastErr != nil {
				msg += fmt.Sprintf(" (last error: %v)", lastErr)
			}
			if evs, err := c.PodEvents(context.Background(), name); err == nil {
				for _, e := range evs {
					msg += fmt.Sprintf("\n  event %s %s: %s", e.Type, e.Reason, e.Message)
				}
			}
			return last, fmt.Errorf("%s", msg)
		case <-time.After(pollInterval):
		}
	}
}

// WaitForPodScheduled waits until the pod has spec.nodeName (bound; it stays Pending without a kubelet).
func (c *Cluster) WaitForPodScheduled(ctx context.Context, name string) (*corev1.Pod, error) {
	return c.WaitForPod(ctx, name, DefaultWait, "scheduled", func(p *corev1.Pod) bool { return p.Spec.NodeName != "" })
}

// PodEvents lists the events about a pod of the cluster's namespace, oldest first.
func (c *Cluster) PodEvents(ctx context.Context, name string) ([]corev1.Event, error) {
	sel := fields.Set{"involvedObject.kind": "Pod", "involvedObject.name": name}.AsSelector().String()
	l, err := c.Client.CoreV1().Events(c.Namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}

// WaitForFailedScheduling waits for a FailedScheduling event about the pod whose message contains
// every one of substrings, and checks the pod is still unbound.
func (c *Cluster) WaitForFailedScheduling(ctx context.Context, name string, timeout time.Duration, substrings ...string) (*corev1.Event, error) {
	deadline := time.Now().Add(timeout)
	var seen []string
	for {
		evs, err := c.PodEvents(ctx, name)
		if err == nil {
			seen = seen[:0]
		next:
			for i := range evs {
				e := &evs[i]
				if e.Reason != "FailedScheduling" {
					continue
				}
				seen = append(seen, e.Message)
				for _, s := range substrings {
					if !strings.Contains(e.Message, s) {
						continue next
					}
				}
				p, err := c.GetPod(ctx, name)
				if err != nil {
					return e, err
				}
				if p.Spec.NodeName != "" {
					return e, fmt.Errorf("pod %s has FailedScheduling but got bound to %s", name, p.Spec.NodeName)
				}
				return e, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("pod %s: no FailedScheduling event containing %q after %v; FailedScheduling seen: %q",
				name, substrings, timeout, seen)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// DeletePod deletes a pod with grace period 0 and waits until it is gone.
func (c *Cluster) DeletePod(ctx context.Context, name string) error {
	zero := int64(0)
	err := c.Client.CoreV1().Pods(c.Namespace).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	for i := 0; i < 300; i++ {
		if _, err := c.GetPod(ctx, name); apierrors.IsNotFound(err) {
			return nil
		}
		time.Sleep(pollInterval)
	}
	return fmt.Errorf("pod %s still there after delete", name)
}

// ListPods lists the pods of the cluster's namespace.
func (c *Cluster) ListPods(ctx context.Context) ([]corev1.Pod, error) {
	l, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return l.Items, nil
}
