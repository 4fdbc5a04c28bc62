package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The deployed shape (manifests/base/scheduler-deployment.yaml): several replicas, each a pair of
// kube-scheduler and its own extender, the schedulers electing a leader on the Lease of the
// configuration's leaderElection. Only the leader schedules, so only its extender gets calls; the
// standby extenders keep their models warm from the API server.

// LeaderElection is the timing of kube-scheduler's leader election (KubeSchedulerConfiguration
// leaderElection.leaseDuration, renewDeadline, retryPeriod). kube-scheduler wants
// LeaseDuration > RenewDeadline > 1.2 x RetryPeriod.
type LeaderElection struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Replica is one scheduler pod of the deployed shape: kube-scheduler with leader election on, and
// its extender on its own address. Its logs and rendered configuration are in Dir.
type Replica struct {
	Name         string
	Dir          string
	ExtenderAddr string // 127.0.0.1:PORT its scheduler calls (the sidecar's 127.0.0.1:8888 in a pod)
	Scheduler    *Scheduler
	Extender     Extender
	cluster      *Cluster
}

// LeaseRef names the Lease kube-scheduler elects its leader on.
type LeaseRef struct{ Namespace, Name string }

// acquiredLeaseLog is part of what client-go's leader election logs (klog level 0) when it becomes
// leader: `"Successfully acquired lease" lock="NAMESPACE/NAME"`.
const acquiredLeaseLog = "Successfully acquired lease"

// RenderReplicaSchedulerConfig is RenderSchedulerConfig with leader election on, the configuration's
// resourceLock, resourceName and resourceNamespace kept and le's timings set. It returns the Lease.
func RenderReplicaSchedulerConfig(src, dst, kubeconfig, extenderAddr string, le LeaderElection) (LeaseRef, error) {
	if err := RenderSchedulerConfig(src, dst, kubeconfig, extenderAddr); err != nil {
		return LeaseRef{}, err
	}
	var orig, cfg map[string]any
	for path, into := range map[string]*map[string]any{src: &orig, dst: &cfg} {
		raw, err := os.ReadFile(path)
		if err != nil {
			return LeaseRef{}, err
		}
		if err := yaml.Unmarshal(raw, into); err != nil {
			return LeaseRef{}, fmt.Errorf("%s: %w", path, err)
		}
	}
	leCfg, _ := orig["leaderElection"].(map[string]any)
	if leCfg == nil {
		leCfg = map[string]any{}
	}
	leCfg["leaderElect"] = true
	leCfg["leaseDuration"] = le.LeaseDuration.String()
	leCfg["renewDeadline"] = le.RenewDeadline.String()
	leCfg["retryPeriod"] = le.RetryPeriod.String()
	cfg["leaderElection"] = leCfg
	ref := LeaseRef{Namespace: "kube-system", Name: "kube-scheduler"} // kube-scheduler's defaults
	if s, _ := leCfg["resourceNamespace"].(string); s != "" {
		ref.Namespace = s
	}
	if s, _ := leCfg["resourceName"].(string); s != "" {
		ref.Name = s
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return LeaseRef{}, err
	}
	return ref, os.WriteFile(dst, out, 0o644)
}

// GrantLeaderElection creates the Lease's namespace and applies the Role and RoleBinding named
// roleName from an RBAC manifest (manifests/base/rbac-scheduler.yaml grants the Lease that way),
// with the binding's subjects replaced by the harness's kube-scheduler user: the bootstrap
// system:kube-scheduler role only covers the Lease named kube-scheduler.
func (c *Cluster) GrantLeaderElection(ctx context.Context, ref LeaseRef, manifest, roleName string) error {
	_, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Namespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	raw, err := os.ReadFile(manifest)
	if err != nil {
		return err
	}
	var role *rbacv1.Role
	var binding *rbacv1.RoleBinding
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var meta struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return fmt.Errorf("%s: %w", manifest, err)
		}
		if meta.Metadata.Name != roleName {
			continue
		}
		switch meta.Kind {
		case "Role":
			role = &rbacv1.Role{}
			err = yaml.Unmarshal([]byte(doc), role)
		case "RoleBinding":
			binding = &rbacv1.RoleBinding{}
			err = yaml.Unmarshal([]byte(doc), binding)
		}
		if err != nil {
			return fmt.Errorf("%s: %s %s: %w", manifest, meta.Kind, roleName, err)
		}
	}
	if role == nil || binding == nil {
		return fmt.Errorf("%s: no Role and RoleBinding named %s", manifest, roleName)
	}
	if role.Namespace != ref.Namespace {
		return fmt.Errorf("%s: Role %s is in namespace %q, the Lease in %q", manifest, roleName, role.Namespace, ref.Namespace)
	}
	binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName,
		Name: c.APIServer.Identities["kube-scheduler"].User}}
	rbac := c.Client.RbacV1()
	if _, err := rbac.Roles(role.Namespace).Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := rbac.RoleBindings(binding.Namespace).Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// StartReplica starts one pair: ext on a fresh address (logs in Dir/<name>), then kube-scheduler
// with the deployed configuration (src; default manifests/base/scheduler-config.yaml) rendered with
// leader election on and le's timings, calling that extender. The first replica's call also grants
// the Lease (GrantLeaderElection with the deployed RBAC). It returns once the scheduler serves
// /healthz (leader or not). The replica stops with the test.
func (c *Cluster) StartReplica(ctx context.Context, name string, ext Extender, le LeaderElection, src string) (*Replica, LeaseRef, error) {
	r := &Replica{Name: name, Dir: filepath.Join(c.Dir, name), Extender: ext, cluster: c}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, LeaseRef{}, err
	}
	c.T.Cleanup(func() { r.stop() })
	port, err := FreePort()
	if err != nil {
		return nil, LeaseRef{}, err
	}
	r.ExtenderAddr = fmt.Sprintf("127.0.0.1:%d", port)
	if err := r.StartExtender(ctx); err != nil {
		return nil, LeaseRef{}, err
	}
	if src == "" {
		src = filepath.Join(ModuleRoot(), "..", "..", "manifests", "base", "scheduler-config.yaml")
	}
	rendered := filepath.Join(r.Dir, "scheduler-config.yaml")
	ref, err := RenderReplicaSchedulerConfig(src, rendered, c.Kubeconfig("kube-scheduler"), r.ExtenderAddr, le)
	if err != nil {
		return nil, LeaseRef{}, err
	}
	rbacManifest := filepath.Join(ModuleRoot(), "..", "..", "manifests", "base", "rbac-scheduler.yaml")
	if err := c.GrantLeaderElection(ctx, ref, rbacManifest, "topofit-scheduler-leader-election"); err != nil {
		return nil, LeaseRef{}, fmt.Errorf("lease RBAC: %w", err)
	}
	bin, err := UpstreamBinDir()
	if err != nil {
		return nil, LeaseRef{}, err
	}
	if r.Scheduler, err = newScheduler(r.Dir, bin, rendered, nil); err != nil {
		return nil, LeaseRef{}, err
	}
	if err := r.Scheduler.Start(); err != nil {
		return nil, LeaseRef{}, err
	}
	return r, ref, r.Scheduler.WaitServing(ctx)
}

// site is the Cluster as the replica's extender sees it: the replica's address and directory.
func (r *Replica) site() *Cluster {
	s := *r.cluster
	s.ExtenderAddr, s.Dir = r.ExtenderAddr, r.Dir
	return &s
}

// StartExtender starts (or restarts) the replica's extender on its address.
func (r *Replica) StartExtender(ctx context.Context) error {
	if err := r.Extender.Start(ctx, r.site()); err != nil {
		return fmt.Errorf("replica %s: extender %s: %w", r.Name, r.Extender.Name(), err)
	}
	return nil
}

// StopExtender stops the extender alone (SIGKILL when kill), its scheduler left running.
func (r *Replica) StopExtender(kill bool) error { return r.Extender.Stop(kill) }

// Kill ends the whole pair with SIGKILL, both at once, as when its pod's node dies: no lease is
// released, no call in flight is finished.
func (r *Replica) Kill() error {
	errS := make(chan error, 1)
	go func() { errS <- r.Scheduler.Kill() }()
	errE := r.Extender.Stop(true)
	if err := <-errS; err != nil {
		return err
	}
	return errE
}

// IsLeader says whether the replica's kube-scheduler has logged that it acquired the lease.
func (r *Replica) IsLeader() bool {
	return len(GrepFile(r.Scheduler.LogPath, acquiredLeaseLog)) > 0
}

// WaitLeader waits until one of the replicas holds the lease (by its scheduler's log) and returns it.
func WaitLeader(ctx context.Context, timeout time.Duration, replicas ...*Replica) (*Replica, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, r := range replicas {
			if r.Scheduler.Running() && r.IsLeader() {
				return r, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no replica acquired the lease within %v", timeout)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// GetLease reads the Lease the schedulers elect their leader on.
func (c *Cluster) GetLease(ctx context.Context, ref LeaseRef) (*coordinationv1.Lease, error) {
	return c.Client.CoordinationV1().Leases(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
}

func (r *Replica) stop() {
	if r.Scheduler != nil {
		_ = r.Scheduler.Stop(10 * time.Second)
	}
	if r.Extender != nil {
		_ = r.Extender.Stop(false)
	}
	if r.cluster.T.Failed() {
		for _, name := range []string{"kube-scheduler.log", "extender.log"} {
			p := filepath.Join(r.Dir, name)
			if _, err := os.Stat(p); err == nil {
				r.cluster.T.Logf("---- tail of %s/%s ----\n%s", r.Name, name, TailFile(p, 30))
			}
		}
	}
}
