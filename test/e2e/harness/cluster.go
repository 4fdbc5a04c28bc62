package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// SchedulerName is the profile of manifests/base/scheduler-config.yaml that calls the extender.
const SchedulerName = "topofit-scheduler"

// Options choose what a Cluster runs.
type Options struct {
	// SchedulerConfig is a KubeSchedulerConfiguration file; default manifests/base/scheduler-config.yaml.
	SchedulerConfig string
	// Extender serves the extender verbs (FakeExtender, TopofitExtender); nil runs none (the
	// scheduler's calls to it then fail).
	Extender Extender
	// NoScheduler leaves kube-scheduler out (tests of topofit's watches alone).
	NoScheduler   bool
	APIServerArgs []string
	SchedulerArgs []string
	// Namespace the pod helpers use; default "e2e".
	Namespace string
}

// Cluster is a control plane for one test: embedded etcd, kube-apiserver, kube-scheduler and an
// extender, all on 127.0.0.1. Start registers its teardown with t.Cleanup.
type Cluster struct {
	T            testing.TB
	Dir          string // logs, kubeconfigs, certificates, etcd data
	Etcd         *Etcd
	PKI          *PKI
	APIServer    *APIServer
	Scheduler    *Scheduler
	Extender     Extender
	ExtenderAddr string // 127.0.0.1:PORT the scheduler calls
	Client       kubernetes.Interface
	Namespace    string
}

// Start brings a cluster up or fails the test.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := &Cluster{T: t, Dir: ArtifactsDir(t), Extender: opts.Extender, Namespace: opts.Namespace}
	if c.Namespace == "" {
		c.Namespace = "e2e"
	}
	t.Cleanup(c.stop)
	if err := c.start(ctx, opts); err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	return c
}

// ArtifactsDir is a test's folder for its logs and files: <$TOPOFIT_E2E_ARTIFACTS>/<test name>,
// emptied first (one run's logs), else a temporary one.
func ArtifactsDir(t testing.TB) string {
	if root := os.Getenv("TOPOFIT_E2E_ARTIFACTS"); root != "" {
		name := regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_")
		dir := filepath.Join(root, name)
		_ = os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			return dir
		}
	}
	return t.TempDir()
}

func (c *Cluster) start(ctx context.Context, opts Options) error {
	bin, err := UpstreamBinDir()
	if err != nil {
		return err
	}
	if c.Etcd, err = StartEtcd(c.Dir); err != nil {
		return err
	}
	if c.PKI, err = NewPKI(filepath.Join(c.Dir, "pki")); err != nil {
		return err
	}
	if c.APIServer, err = newAPIServer(c.Dir, bin, c.Etcd.ClientURL, c.PKI, opts.APIServerArgs); err != nil {
		return err
	}
	if err := c.APIServer.Start(); err != nil {
		return err
	}
	if err := c.APIServer.WaitReady(ctx); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig("admin"))
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 500, 1000
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if err := c.ensureNamespace(ctx); err != nil {
		return err
	}
	port, err := FreePort()
	if err != nil {
		return err
	}
	c.ExtenderAddr = fmt.Sprintf("127.0.0.1:%d", port)
	if c.Extender != nil {
		if err := c.Extender.Start(ctx, c); err != nil {
			return fmt.Errorf("extender %s: %w", c.Extender.Name(), err)
		}
	}
	if opts.NoScheduler {
		return nil
	}
	src := opts.SchedulerConfig
	if src == "" {
		src = filepath.Join(ModuleRoot(), "..", "..", "manifests", "base", "scheduler-config.yaml") // the deployed config
	}
	rendered := filepath.Join(c.Dir, "scheduler-config.yaml")
	if err := RenderSchedulerConfig(src, rendered, c.Kubeconfig("kube-scheduler"), c.ExtenderAddr); err != nil {
		return err
	}
	if c.Scheduler, err = newScheduler(c.Dir, bin, rendered, opts.SchedulerArgs); err != nil {
		return err
	}
	if err := c.Scheduler.Start(); err != nil {
		return err
	}
	return c.Scheduler.WaitServing(ctx)
}

func (c *Cluster) ensureNamespace(ctx context.Context) error {
	// The namespace controller of the apiserver creates "default" a moment after /readyz; retry.
	var err error
	for i := 0; i < 50; i++ {
		_, err = c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{Name: c.Namespace}}, metav1.CreateOptions{})
		if err == nil || strings.Contains(err.Error(), "already exists") {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("create namespace %s: %w", c.Namespace, err)
}

// Kubeconfig is the kubeconfig path of an identity: "admin", "kube-scheduler" or "topofit".
func (c *Cluster) Kubeconfig(identity string) string {
	return c.APIServer.Identities[identity].Kubeconfig
}

// RestartAPIServer stops kube-apiserver (SIGTERM, so watches end the way they do in a rolling
// upgrade), waits down, starts it again on the same port with the same etcd, and waits for /readyz.
// down is how long it stays stopped.
func (c *Cluster) RestartAPIServer(ctx context.Context, down time.Duration) error {
	// Open watches keep an apiserver that got SIGTERM from exiting for long (seen: > 30 s with
	// kube-scheduler connected): after 5 s it gets SIGKILL, like a crashed apiserver.
	if err := c.APIServer.Stop(5 * time.Second); err != nil {
		return err
	}
	time.Sleep(down)
	if err := c.APIServer.Start(); err != nil {
		return err
	}
	return c.APIServer.WaitReady(ctx)
}

// RestartExtender stops the extender (Kill for a crash when kill is true), then starts it again on
// the same address.
func (c *Cluster) RestartExtender(ctx context.Context, kill bool, down time.Duration) error {
	if c.Extender == nil {
		return fmt.Errorf("no extender")
	}
	if err := c.Extender.Stop(kill); err != nil {
		return err
	}
	time.Sleep(down)
	return c.Extender.Start(ctx, c)
}

func (c *Cluster) stop() {
	if c.Scheduler != nil {
		_ = c.Scheduler.Stop(10 * time.Second)
	}
	if c.Extender != nil {
		_ = c.Extender.Stop(false)
	}
	if c.APIServer != nil {
		_ = c.APIServer.Stop(15 * time.Second)
	}
	c.Etcd.Stop()
	if c.T.Failed() {
		c.T.Logf("cluster artifacts in %s", c.Dir)
		for _, name := range []string{"kube-apiserver.log", "kube-scheduler.log", "extender.log"} {
			p := filepath.Join(c.Dir, name)
			if _, err := os.Stat(p); err == nil {
				c.T.Logf("---- tail of %s ----\n%s", name, TailFile(p, 30))
			}
		}
	}
}
