package tests

// TestTopofitKubectlPlugin: `kubectl topofit` - the topofit binary run as kubectl-topofit - reaches topofit's
// ops API through the real kube-apiserver's service proxy with the user's kubeconfig, as a plugin does
// in a cluster. kube-apiserver refuses loopback endpoints, so topofit serves on a test host made here:
// a network namespace joined to this one by a veth pair (10.254.77.1 here, 10.254.77.2 there), with the
// Service topofit-system/topofit-metrics and its Endpoints pointing at it. That topofit runs on its
// embedded demo cluster; the pod explained lives in the API server.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"topofit.dev/e2e/harness"
	"topofit.dev/e2e/skip"
)

func TestTopofitKubectlPlugin(t *testing.T) {
	bin := harness.TopofitBinary(t)
	if os.Geteuid() != 0 {
		skip.OrFail(t, "a network namespace for the test host needs root")
	}
	ctx := context.Background()

	// The test host.
	ns := fmt.Sprintf("tf-e2e-%d", os.Getpid()%100000)
	here, there := fmt.Sprintf("tfa%d", os.Getpid()%100000), fmt.Sprintf("tfb%d", os.Getpid()%100000)
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ip("netns", "add", ns)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	ip("link", "add", here, "type", "veth", "peer", "name", there)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", here).Run() })
	ip("link", "set", there, "netns", ns)
	ip("addr", "add", "10.254.77.1/30", "dev", here)
	ip("link", "set", here, "up")
	ip("netns", "exec", ns, "ip", "addr", "add", "10.254.77.2/30", "dev", there)
	ip("netns", "exec", ns, "ip", "link", "set", there, "up")
	ip("netns", "exec", ns, "ip", "link", "set", "lo", "up")

	c := harness.Start(t, harness.Options{NoScheduler: true})
	serve := &harness.Process{Name: "topofit-ops", Path: "ip",
		Args:    []string{"netns", "exec", ns, bin, "serve", "--listen", "10.254.77.2:18888", "--ops-listen", "10.254.77.2:18889"},
		LogPath: filepath.Join(c.Dir, "topofit-ops.log")}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Stop(5 * time.Second) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := (&http.Client{Timeout: time.Second}).Get("http://10.254.77.2:18889/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("topofit on the test host never got ready: %v; log:\n%s", err, harness.TailFile(serve.LogPath, 20))
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The Service and Endpoints manifests/base/metrics-service.yaml gets in a cluster.
	core := c.Client.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "topofit-system"}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Services("topofit-system").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "topofit-metrics"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "metrics", Port: 8889,
			TargetPort: intstr.FromInt32(18889)}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The service proxy only forwards to addresses of pods (Endpoints with a targetRef whose pod
	// has that IP), as the endpoints controller writes them: a pod stands for topofit's replica.
	replica, err := core.Pods("topofit-system").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "topofit-scheduler-0"},
		Spec:       corev1.PodSpec{NodeName: "test-host", Containers: []corev1.Container{{Name: "topofit", Image: "topofit"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	replica.Status.PodIP = "10.254.77.2"
	replica.Status.PodIPs = []corev1.PodIP{{IP: "10.254.77.2"}}
	replica.Status.Phase = corev1.PodRunning
	if _, err := core.Pods("topofit-system").UpdateStatus(ctx, replica, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := core.Endpoints("topofit-system").Create(ctx, &corev1.Endpoints{ //nolint:staticcheck // the service proxy reads Endpoints
		ObjectMeta: metav1.ObjectMeta{Name: "topofit-metrics"},
		Subsets: []corev1.EndpointSubset{{
			Addresses: []corev1.EndpointAddress{{IP: "10.254.77.2", TargetRef: &corev1.ObjectReference{
				Kind: "Pod", Namespace: "topofit-system", Name: "topofit-scheduler-0", UID: replica.UID}}},
			Ports: []corev1.EndpointPort{{Name: "metrics", Port: 18889}}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreatePod(ctx, harness.GPUPod("four", 4)); err != nil {
		t.Fatal(err)
	}

	// The plugin as kubectl finds it: an executable named kubectl-topofit.
	dir := t.TempDir()
	plugin := filepath.Join(dir, "kubectl-topofit")
	if err := os.Symlink(bin, plugin); err != nil {
		t.Fatal(err)
	}
	kubectl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(plugin, append(args, "--kubeconfig", c.Kubeconfig("admin"))...)
		out, err := cmd.Output()
		if err != nil {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("kubectl topofit %s: %v: %s%s", strings.Join(args, " "), err, out, stderr)
		}
		return string(out)
	}

	nodes := kubectl("nodes")
	t.Logf("kubectl topofit nodes:\n%s", nodes)
	for _, want := range []string{"NAME", "NVLINK SETS 2/4/8", "dgx-v100-1", "a100-1", "pcie-4x-1"} {
		if !strings.Contains(nodes, want) {
			t.Errorf("nodes table lacks %q", want)
		}
	}
	var asJSON struct {
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(kubectl("nodes", "-o", "json")), &asJSON); err != nil || len(asJSON.Nodes) != 5 {
		t.Errorf("nodes -o json: %v, %d nodes, want 5", err, len(asJSON.Nodes))
	}
	if y := kubectl("nodes", "-o", "yaml"); !strings.Contains(y, `name: "dgx-v100-1"`) {
		t.Errorf("nodes -o yaml lacks the node: %s", y)
	}

	pod := kubectl("pod", "train-llm-0", "-n", "ml")
	t.Logf("kubectl topofit pod train-llm-0 -n ml:\n%s", pod)
	if !strings.Contains(pod, "ml/train-llm-0") || !strings.Contains(pod, "dgx-v100-1") || !strings.Contains(pod, "0,1,2,3") {
		t.Errorf("pod table %q, want ml/train-llm-0 on dgx-v100-1 holding 0,1,2,3", pod)
	}

	explain := kubectl("explain", "four", "-n", c.Namespace)
	t.Logf("kubectl topofit explain four:\n%s", explain)
	if !strings.Contains(explain, "pod e2e/four: 4 GPUs, policy best-effort, best node a100-1") ||
		!strings.Contains(explain, "4 GPUs requested, 3 free (GPUs 1,2,3)") {
		t.Errorf("explain output lacks the best node or pcie-4x-1's reason")
	}
	if !strings.Contains(explain, "\nworkload: ") || !strings.Contains(explain, "4 GPUs") {
		t.Errorf("explain output lacks the workload estimate the scores used")
	}

	// A member of a group of pods: explain adds its group (every host's room, the plan it would get),
	// and `kubectl topofit groups` lists the groups (none filtered by this topofit yet: the header).
	member := harness.GPUPod("member", 8)
	member.Annotations = map[string]string{"topofit.io/group": "job", "topofit.io/group-size": "1"}
	if _, err := c.CreatePod(ctx, member); err != nil {
		t.Fatal(err)
	}
	grouped := kubectl("explain", "member", "-n", c.Namespace)
	t.Logf("kubectl topofit explain member:\n%s", grouped)
	if !strings.Contains(grouped, "group "+c.Namespace+"/job: waiting") || !strings.Contains(grouped, ": room for 1 members, 8 free GPUs - fits") ||
		!strings.Contains(grouped, "member on ") || !strings.Contains(grouped, ": GPUs 0,1,2,3,4,5,6,7") {
		t.Errorf("explain of a group member lacks its group, a host's room or the plan")
	}
	if groups := kubectl("groups"); !strings.HasPrefix(groups, "NAMESPACE  GROUP  STATE  MEMBERS") {
		t.Errorf("kubectl topofit groups: %q, want the table's header", groups)
	}
}
