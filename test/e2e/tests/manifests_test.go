package tests

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"topofit.dev/e2e/harness"
)

// manifests/ as kustomize renders it (the base and every overlay), applied to the real
// kube-apiserver with a server-side dry run (`kubectl apply --server-side --dry-run=server`): every
// object passes the server's decoding, defaulting, validation and admission, the namespace being
// created for real first; the pod of every Deployment and DaemonSet, too, as a Pod (the server's pod
// validation and admission: priority class, RuntimeClass `nvidia` as the README's prerequisites
// create it). The Helm chart's defaults render the same objects (test/deploy/helm-test.sh).
// Then topofit-node's RBAC, applied for real, is asked of the real authorizer
// (SubjectAccessReview): its service account may do what `topofit node` does and nothing beside.

const fieldManager = "topofit-e2e"

// kustomizeBuild renders dir (relative to the repository root) with the kustomize that
// test/deploy/build-go-tool.sh builds and caches.
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	root := filepath.Join(harness.ModuleRoot(), "..", "..")
	kustomize := os.Getenv("KUSTOMIZE")
	if kustomize == "" {
		out, err := exec.Command(filepath.Join(root, "test", "deploy", "build-go-tool.sh"),
			"kustomize", "kustomize", "sigs.k8s.io/kustomize/kustomize/v5").Output()
		if err != nil {
			t.Fatalf("build kustomize: %v", err)
		}
		kustomize = strings.TrimSpace(string(out))
	}
	var stderr bytes.Buffer
	cmd := exec.Command(kustomize, "build", filepath.Join(root, dir))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build %s: %v\n%s", dir, err, stderr.String())
	}
	return out
}

func decodeObjects(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(string(stream), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatalf("decode rendered manifest: %v\n%s", err, doc)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func TestManifestsServerSideDryRun(t *testing.T) {
	c := harness.Start(t, harness.Options{NoScheduler: true})
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig("admin"))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))

	apply := func(obj *unstructured.Unstructured, dryRun bool) error {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("%s: no such resource in the server: %w", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if ns := obj.GetNamespace(); ns != "" {
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		body, err := obj.MarshalJSON()
		if err != nil {
			return err
		}
		force := true
		opts := metav1.PatchOptions{FieldManager: fieldManager, Force: &force}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, body, opts)
		return err
	}

	dirs := []string{"manifests"}
	overlays, _ := filepath.Glob(filepath.Join(harness.ModuleRoot(), "..", "..", "manifests", "overlays", "*"))
	for _, o := range overlays {
		dirs = append(dirs, filepath.Join("manifests", "overlays", filepath.Base(o)))
	}
	runtimeClass := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
		"metadata": map[string]any{"name": "nvidia"}, "handler": "nvidia"}}
	if err := apply(runtimeClass, false); err != nil {
		t.Fatalf("RuntimeClass nvidia: %v", err)
	}
	var nodeRBAC []*unstructured.Unstructured
	for _, dir := range dirs {
		objs := decodeObjects(t, kustomizeBuild(t, dir))
		kinds := map[string]int{}
		for _, obj := range objs {
			if obj.GetKind() == "Namespace" {
				if err := apply(obj, false); err != nil {
					t.Fatalf("%s: namespace %s: %v", dir, obj.GetName(), err)
				}
			}
		}
		for _, obj := range objs {
			if err := apply(obj, true); err != nil {
				t.Errorf("%s: %s %s/%s refused by kube-apiserver: %v", dir, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
			}
			kinds[obj.GetKind()]++
			if obj.GetKind() == "Deployment" || obj.GetKind() == "DaemonSet" {
				tmpl, _, _ := unstructured.NestedMap(obj.Object, "spec", "template")
				pod := &unstructured.Unstructured{Object: tmpl}
				pod.SetAPIVersion("v1")
				pod.SetKind("Pod")
				pod.SetNamespace(obj.GetNamespace())
				pod.SetName(obj.GetName() + "-dry-run")
				if err := apply(pod, true); err != nil {
					t.Errorf("%s: the pod of %s %s/%s refused by kube-apiserver: %v", dir, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				}
				kinds["Pod"]++
			}
			if dir == "manifests" && obj.GetName() == "topofit-node" &&
				(obj.GetKind() == "ServiceAccount" || obj.GetKind() == "ClusterRole" || obj.GetKind() == "ClusterRoleBinding") {
				nodeRBAC = append(nodeRBAC, obj)
			}
		}
		if kinds["DaemonSet"] != 1 {
			t.Errorf("%s: %d DaemonSets, want topofit-node's", dir, kinds["DaemonSet"])
		}
		t.Logf("%s: %d objects accepted by a server-side dry run (%v)", dir, len(objs), kinds)
	}
	if t.Failed() {
		return
	}

	// topofit-node's identity, for real, and what the authorizer lets it do.
	if len(nodeRBAC) != 3 {
		t.Fatalf("the base has %d of topofit-node's ServiceAccount, ClusterRole and ClusterRoleBinding", len(nodeRBAC))
	}
	for _, obj := range nodeRBAC {
		if err := apply(obj, false); err != nil {
			t.Fatalf("apply %s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	user := "system:serviceaccount:topofit-system:topofit-node"
	cases := []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		// What topofit node does: its pods (list and watch by spec.nodeName), gpu-actual, its Node, events.
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}, true},
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "e2e", Name: "p"}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "pods", Namespace: "e2e", Name: "p"}, true},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Name: "gpu-1"}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "nodes", Name: "gpu-1"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "events", Namespace: "e2e"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Group: "events.k8s.io", Resource: "events", Namespace: "e2e"}, true},
		// Nothing beside.
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "topofit-system"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "e2e", Name: "p"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Namespace: "e2e"}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Resource: "pods", Subresource: "status", Namespace: "e2e", Name: "p"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "binding", Namespace: "e2e", Name: "p"}, false},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: "e2e", Name: "p"}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Resource: "nodes", Name: "gpu-1"}, false},
		{authorizationv1.ResourceAttributes{Verb: "patch", Resource: "nodes", Subresource: "status", Name: "gpu-1"}, false},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "nodes", Name: "gpu-1"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "nodes"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "configmaps", Namespace: "topofit-system"}, false},
	}
	review := func(attrs authorizationv1.ResourceAttributes) *authorizationv1.SubjectAccessReview {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User:               user,
			Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:topofit-system", "system:authenticated"},
			ResourceAttributes: &attrs,
		}}
		got, err := c.Client.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SubjectAccessReview: %v", err)
		}
		return got
	}
	// The RBAC authorizer learns the new binding from its informers: wait until it allows the first
	// request (at most 30 s), then ask everything once.
	deadline := time.Now().Add(30 * time.Second)
	for !review(cases[0].attrs).Status.Allowed && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	for _, tc := range cases {
		attrs := tc.attrs
		got := review(attrs)
		what := fmt.Sprintf("%s %s", attrs.Verb, attrs.Resource)
		if attrs.Group != "" {
			what += "." + attrs.Group
		}
		if attrs.Subresource != "" {
			what += "/" + attrs.Subresource
		}
		if got.Status.Allowed != tc.want {
			t.Errorf("topofit-node may %s: %v, want %v (%s)", what, got.Status.Allowed, tc.want, got.Status.Reason)
		}
	}
	if !t.Failed() {
		t.Logf("topofit-node's RBAC: %d requests answered by the authorizer as expected", len(cases))
	}
}
