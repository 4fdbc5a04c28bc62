package tests

// The pods of the fidelity bursts (fidelity_topofit_test.go) and how their plans reach topofit node:
// a --pods-file PodList, or pods created bound on a real kube-apiserver.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/nodesim"
)

type plannedPod struct {
	pod     *corev1.Pod
	plan    map[string][]string // container -> sorted IDs
	done    bool                // terminated
	foreign bool                // no topofit.io/gpu-plan: plan is the free GPUs nobody planned
}

// burst makes one round of pods whose plans fill free (shuffled), with creation times in an order
// unrelated to plan order.
func burst(rng *rand.Rand, round int, free []string, node string, t0 time.Time, seq *int, withForeign bool) []*plannedPod {
	free = append([]string(nil), free...)
	rng.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	var sizes []int
	var foreign []*plannedPod
	if round%2 == 1 { // one size for all: the pods the matcher must tell apart by PodResources Get
		opts := []int{1, 2, 4}
		s := opts[rng.Intn(len(opts))]
		for s > 1 && len(free)/s < 2 {
			s /= 2
		}
		for n := len(free) / s; n > 0; n-- {
			sizes = append(sizes, s)
		}
	} else {
		// A foreign pod (no plan) for one or two GPUs left out of every plan.
		if withForeign && len(free) >= 2 {
			f := 1 + rng.Intn(min(2, len(free)-1))
			*seq++
			name := fmt.Sprintf("f%03d", *seq)
			fp := &plannedPod{foreign: true, plan: map[string][]string{"main": sorted(free[len(free)-f:])},
				pod: nodesim.Pod(name, node, types.UID("uid-"+name), t0.Add(time.Duration(*seq)*time.Minute), nodesim.Container{Name: "main", GPUs: f})}
			foreign = append(foreign, fp)
			free = free[:len(free)-f]
		}
		left := len(free)
		for left > 0 {
			var fit []int
			for _, s := range []int{1, 2, 2, 4, 4, 8} {
				if s <= left {
					fit = append(fit, s)
				}
			}
			s := fit[rng.Intn(len(fit))]
			sizes = append(sizes, s)
			left -= s
		}
	}
	var out []*plannedPod
	next := 0
	for _, s := range sizes {
		set := free[next : next+s]
		next += s
		*seq++
		name := fmt.Sprintf("p%03d", *seq)
		pp := &plannedPod{plan: map[string][]string{}}
		var cs []nodesim.Container
		switch shape := rng.Intn(6); {
		case round%2 == 0 && shape == 0 && s >= 2: // two app containers
			a := 1 + rng.Intn(s-1)
			cs = []nodesim.Container{{Name: "main", GPUs: a}, {Name: "side", GPUs: s - a}}
			pp.plan["main"], pp.plan["side"] = sorted(set[:a]), sorted(set[a:])
		case round%2 == 0 && shape == 1: // an init container whose GPUs main reuses
			i := 1 + rng.Intn(s)
			cs = []nodesim.Container{{Name: "setup", GPUs: i, Init: true}, {Name: "main", GPUs: s}}
			pp.plan["setup"], pp.plan["main"] = sorted(set[:i]), sorted(set)
		default:
			cs = []nodesim.Container{{Name: "main", GPUs: s}}
			pp.plan["main"] = sorted(set)
		}
		pp.pod = nodesim.Pod(name, node, types.UID("uid-"+name), time.Time{}, cs...)
		out = append(out, pp)
	}
	// Creation order: a random permutation of plan order, one second apart.
	perm := rng.Perm(len(out))
	base := t0.Add(time.Duration(*seq) * time.Minute)
	for i, p := range out {
		p.pod.CreationTimestamp.Time = base.Add(time.Duration(perm[i]) * time.Second)
	}
	return append(foreign, out...)
}

// planJSON is topofit.io/gpu-plan: containers in spec order (init first), UUIDs, bind time.
func planJSON(pp *plannedPod, node string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"v":1,"node":%q,"containers":{`, node)
	first := true
	for _, c := range append(append([]corev1.Container(nil), pp.pod.Spec.InitContainers...), pp.pod.Spec.Containers...) {
		ids, ok := pp.plan[c.Name]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		q, _ := json.Marshal(ids)
		fmt.Fprintf(&b, "%q:%s", c.Name, q)
	}
	fmt.Fprintf(&b, `},"t":%d}`, pp.pod.CreationTimestamp.Unix())
	return b.String()
}

// planSource hands the plans to topofit node: the flags that say where from, and publish, which makes
// every pod of `all` visible with its plan (foreign ones without), terminated ones as terminated.
type planSource interface {
	args() []string
	publish(ctx context.Context, all []*plannedPod) error
}

// filePlans is --pods-file: the whole PodList rewritten (write, then rename), terminated pods as Succeeded.
type filePlans struct{ path, node string }

func (f *filePlans) args() []string { return []string{"--pods-file", f.path} }
func (f *filePlans) publish(_ context.Context, all []*plannedPod) error {
	return writePods(f.path, f.node, all)
}

// apiPlans is a real kube-apiserver (--kubeconfig, topofit's identity): new pods are created bound
// to the node with their plan (as topofit's bind leaves them), in creation-time order, and replaced
// by the stored objects (the server's UID and creation time, one-second resolution: kubelet's order
// among pods of one second is then arbitrary); terminated pods are deleted.
type apiPlans struct {
	c       *harness.Cluster
	node    string
	created map[*plannedPod]bool
	deleted map[*plannedPod]bool
}

func (a *apiPlans) args() []string { return []string{"--kubeconfig", a.c.Kubeconfig("topofit")} }
func (a *apiPlans) publish(ctx context.Context, all []*plannedPod) error {
	if a.created == nil {
		a.created, a.deleted = map[*plannedPod]bool{}, map[*plannedPod]bool{}
	}
	var fresh []*plannedPod
	for _, pp := range all {
		if !a.created[pp] {
			fresh = append(fresh, pp)
		}
	}
	sort.SliceStable(fresh, func(i, j int) bool {
		return fresh[i].pod.CreationTimestamp.Before(&fresh[j].pod.CreationTimestamp)
	})
	for _, pp := range fresh {
		p := pp.pod.DeepCopy()
		p.Namespace, p.UID, p.CreationTimestamp, p.ResourceVersion = a.c.Namespace, "", metav1.Time{}, ""
		if !pp.foreign {
			p.Annotations[planAnnotation] = planJSON(pp, a.node)
		}
		created, err := a.c.Client.CoreV1().Pods(a.c.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		pp.pod, a.created[pp] = created, true
	}
	zero := int64(0)
	for _, pp := range all {
		if pp.done && !a.deleted[pp] {
			err := a.c.Client.CoreV1().Pods(pp.pod.Namespace).Delete(ctx, pp.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			if err != nil {
				return err
			}
			a.deleted[pp] = true
		}
	}
	return nil
}

// writePods replaces the pods file (write, then rename) with every pod, terminated ones as Succeeded.
func writePods(path, node string, pods []*plannedPod) error {
	list := corev1.PodList{Items: []corev1.Pod{}} // "items": [] as the API server writes it, never null
	list.APIVersion, list.Kind = "v1", "PodList"
	for _, pp := range pods {
		p := pp.pod.DeepCopy()
		if !pp.foreign {
			p.Annotations[planAnnotation] = planJSON(pp, node)
		}
		if pp.done {
			p.Status.Phase = corev1.PodSucceeded
		}
		list.Items = append(list.Items, *p)
	}
	data, err := json.Marshal(&list)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
