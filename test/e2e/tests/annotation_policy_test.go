package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"topofit.dev/e2e/harness"
)

// manifests/base/annotation-policy.yaml, created as it is in the real kube-apiserver: only the
// extender's service account writes topofit.io/gpu-plan and topofit.io/gpu-ids, only the node
// side's writes topofit.io/gpu-actual - through pods, pods/status and Bindings alike.
//
// The service accounts are played by impersonation (the test's admin impersonates
// system:serviceaccount:topofit-system:topofit-scheduler, with system:masters so that RBAC lets it
// write): admission sees the impersonated user, which is what the policy checks.

const (
	extenderSA = "system:serviceaccount:topofit-system:topofit-scheduler"
	nodeSA     = "system:serviceaccount:topofit-system:topofit-node"
)

func loadPolicy(t *testing.T) (*admissionv1.ValidatingAdmissionPolicy, *admissionv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(harness.ModuleRoot(), "..", "..", "manifests", "base", "annotation-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var policy *admissionv1.ValidatingAdmissionPolicy
	var binding *admissionv1.ValidatingAdmissionPolicyBinding
	for _, doc := range bytes.Split(text, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ValidatingAdmissionPolicy":
			policy = &admissionv1.ValidatingAdmissionPolicy{}
			err = yaml.UnmarshalStrict(doc, policy)
		case "ValidatingAdmissionPolicyBinding":
			binding = &admissionv1.ValidatingAdmissionPolicyBinding{}
			err = yaml.UnmarshalStrict(doc, binding)
		default:
			t.Fatalf("unexpected kind %q in annotation-policy.yaml", meta.Kind)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if policy == nil || binding == nil {
		t.Fatal("annotation-policy.yaml lacks the policy or its binding")
	}
	return policy, binding
}

func clientAs(t *testing.T, c *harness.Cluster, user string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig("admin"))
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters", "system:authenticated"}}
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

func annotate(client kubernetes.Interface, ns, pod string, annotations map[string]any) error {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	_, err := client.CoreV1().Pods(ns).Patch(context.Background(), pod, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

func TestAnnotationPolicy(t *testing.T) {
	ctx := context.Background()
	c := harness.Start(t, harness.Options{NoScheduler: true})
	c.CreateNodes(ctx, harness.GPUNode("n1", 8, "dgx1-v100"))

	// The API is GA and served (admissionregistration.k8s.io/v1).
	resources, err := c.Client.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, r := range resources.APIResources {
		served[r.Name] = true
	}
	if !served["validatingadmissionpolicies"] || !served["validatingadmissionpolicybindings"] {
		t.Fatalf("admissionregistration.k8s.io/v1 serves %v, not ValidatingAdmissionPolicy", served)
	}

	policy, binding := loadPolicy(t)
	if _, err := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The policy's status (type checking) is written by kube-controller-manager, which the harness
	// does not run; a CEL error would show here as a refusal without the policy's message (its
	// failurePolicy is Fail), and as refused writes that only touch other annotations.

	admin := clientAs(t, c, "")
	extender := clientAs(t, c, extenderSA)
	node := clientAs(t, c, nodeSA)
	ns := c.Namespace
	plan := `{"v":1,"node":"n1","containers":{"main":["GPU-x"]},"t":1}`

	if _, err := c.CreatePod(ctx, harness.GPUPod("p", 1)); err != nil {
		t.Fatal(err)
	}
	// The policy takes effect once the API server's admission has loaded it: poll with the first refusal.
	refused := func(err error, who string) {
		t.Helper()
		if err == nil || !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Fatalf("write as %s: %v, want a refusal by the policy", who, err)
		}
		if !strings.Contains(err.Error(), "topofit-gpu-annotations") || !strings.Contains(err.Error(), "may set or change") {
			t.Fatalf("write as %s refused with %q, want the policy's message", who, err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		// A new value each time: always a change, even if an undo below was already refused.
		err := annotate(admin, ns, "p", map[string]any{annotationPlan: strings.Replace(plan, `"t":1`, fmt.Sprintf(`"t":%d`, 100+attempt), 1)})
		if err != nil {
			refused(err, "admin")
			t.Logf("admin setting %s: %v", annotationPlan, err)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the policy never took effect: admin still sets topofit.io/gpu-plan")
		}
		_ = annotate(admin, ns, "p", map[string]any{annotationPlan: nil}) // Not yet enforced: undo.
		time.Sleep(200 * time.Millisecond)
	}

	// Other annotations are anyone's.
	if err := annotate(admin, ns, "p", map[string]any{"team": "a"}); err != nil {
		t.Errorf("admin setting an unrelated annotation: %v", err)
	}
	// A user cannot create a pod that names its own plan or GPUs.
	for _, key := range []string{annotationPlan, harness.AnnotationGPUIDs, annotationActual} {
		spec := harness.GPUPod("self-"+strings.ReplaceAll(strings.TrimPrefix(key, "topofit.io/"), "-", ""), 1)
		spec.Annotations = map[string]string{key: "0"}
		_, err := c.CreatePod(ctx, spec)
		refused(err, "admin creating a pod with "+key)
	}
	// The node side cannot plan; the extender cannot claim observations.
	refused(annotate(node, ns, "p", map[string]any{annotationPlan: plan}), "the node side")
	refused(annotate(extender, ns, "p", map[string]any{annotationActual: plan}), "the extender")
	refused(annotate(admin, ns, "p", map[string]any{harness.AnnotationGPUIDs: "0"}), "admin")

	// A Binding carrying the plan: refused for a user, accepted for the extender.
	bind := func(client kubernetes.Interface, pod string) error {
		return client.CoreV1().Pods(ns).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: pod, Annotations: map[string]string{
				annotationPlan: plan, harness.AnnotationGPUIDs: "0"}},
			Target: corev1.ObjectReference{Kind: "Node", Name: "n1"}}, metav1.CreateOptions{})
	}
	refused(bind(admin, "p"), "admin binding with a plan")
	if err := bind(extender, "p"); err != nil {
		t.Fatalf("the extender's Binding with a plan: %v", err)
	}
	p, err := c.GetPod(ctx, "p")
	if err != nil || p.Spec.NodeName != "n1" || p.Annotations[annotationPlan] != plan {
		t.Fatalf("after the extender's Binding: node %q, plan %q (err %v)", p.Spec.NodeName, p.Annotations[annotationPlan], err)
	}
	// The node side writes what it observed, also through pods/status; nobody else does.
	if err := annotate(node, ns, "p", map[string]any{annotationActual: plan}); err != nil {
		t.Fatalf("the node side setting %s: %v", annotationActual, err)
	}
	p, _ = c.GetPod(ctx, "p")
	p.Annotations[annotationActual] = `{"v":1,"node":"n1","containers":{"main":["GPU-y"]},"t":2}`
	_, err = admin.CoreV1().Pods(ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	refused(err, "admin through pods/status")
	// Removing is changing.
	refused(annotate(admin, ns, "p", map[string]any{annotationPlan: nil}), "admin removing the plan")
	if err := annotate(extender, ns, "p", map[string]any{annotationPlan: nil, harness.AnnotationGPUIDs: nil}); err != nil {
		t.Fatalf("the extender removing its plan: %v", err)
	}
	// Writes that leave the annotations as they were pass for anyone (labels, status).
	if err := annotate(admin, ns, "p", map[string]any{"team": "b"}); err != nil {
		t.Errorf("admin changing an unrelated annotation of an annotated pod: %v", err)
	}
}
