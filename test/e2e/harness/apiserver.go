package harness

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Identity is a bearer token the apiserver accepts (--token-auth-file), and its kubeconfig.
type Identity struct {
	User       string
	Groups     []string
	Token      string
	Kubeconfig string // path, written once the apiserver is up
}

// APIServer is upstream kube-apiserver run as a subprocess against the embedded etcd.
type APIServer struct {
	Process
	URL        string // https://127.0.0.1:PORT
	PKI        *PKI
	Identities map[string]*Identity // by name: admin, kube-scheduler, topofit
}

func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newAPIServer prepares (does not start) a kube-apiserver for a kubelet-less test cluster.
func newAPIServer(dir, bin, etcdURL string, pki *PKI, extraArgs []string) (*APIServer, error) {
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	a := &APIServer{URL: fmt.Sprintf("https://127.0.0.1:%d", port), PKI: pki, Identities: map[string]*Identity{
		// The test itself and topofit act as cluster admins; the scheduler runs under its real identity,
		// which the apiserver's bootstrap RBAC policy (system:kube-scheduler) authorizes.
		"admin":          {User: "e2e-admin", Groups: []string{"system:masters"}},
		"kube-scheduler": {User: "system:kube-scheduler"},
		"topofit":        {User: "topofit", Groups: []string{"system:masters"}},
	}}
	var tokens strings.Builder
	for name, id := range a.Identities {
		id.Token = randomToken()
		fmt.Fprintf(&tokens, "%s,%s,%s,\"%s\"\n", id.Token, id.User, id.User, strings.Join(id.Groups, ","))
		id.Kubeconfig = filepath.Join(dir, name+".kubeconfig")
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens.String()), 0o600); err != nil {
		return nil, err
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--etcd-prefix=/registry",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file=" + pki.ServingCert,
		"--tls-private-key-file=" + pki.ServingKey,
		"--client-ca-file=" + pki.CACert,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=RBAC",
		"--service-account-key-file=" + pki.ServiceAccount,
		"--service-account-signing-key-file=" + pki.ServiceAccount,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kubelets, no controller-manager: nothing would ever lift the not-ready taint or mint
		// service-account tokens. Priority stays on: pods get spec.priority from priorityClassName,
		// as in a real cluster.
		"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--max-requests-inflight=0",
		"--max-mutating-requests-inflight=0",
		"--profiling=false",
		"--v=1",
	}
	args = append(args, extraArgs...)
	a.Process = Process{Name: "kube-apiserver", Path: filepath.Join(bin, "kube-apiserver"), Args: args,
		LogPath: filepath.Join(dir, "kube-apiserver.log")}
	for _, id := range a.Identities {
		if err := writeKubeconfig(id.Kubeconfig, a.URL, pki.CAData, id.Token); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// WaitReady polls /readyz (as admin) until it answers 200 or ctx ends.
func (a *APIServer) WaitReady(ctx context.Context) error {
	c := a.PKI.HTTPClient(5*time.Second, true)
	defer c.CloseIdleConnections()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+a.Identities["admin"].Token)
		resp, err := c.Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, body)
		} else {
			last = err.Error()
		}
		if !a.Running() {
			return fmt.Errorf("kube-apiserver exited; log tail:\n%s", TailFile(a.LogPath, 40))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %s; log tail:\n%s", last, TailFile(a.LogPath, 40))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func writeKubeconfig(path, server string, caData []byte, token string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: e2e
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: e2e
current-context: e2e
`, server, base64.StdEncoding.EncodeToString(caData), token)
	return os.WriteFile(path, []byte(cfg), 0o600)
}
