package tests

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"topofit.dev/e2e/harness"
)

// The primary-scheduler setup with topofit off-pod: kube-scheduler calls topofit over HTTPS
// (enableHTTPS + tlsConfig with caFile, certFile and keyFile) and topofit requires a client
// certificate from the CA (--client-ca-file). The deployed scheduler configuration is used with only
// its extender's TLS fields added. GPU pods are scheduled and bound through it; its serving certificate
// is rotated by replacing the files, new connections get the new one and pods keep being bound; clients
// without a certificate, with another CA's, or speaking plain HTTP are refused.
func TestTopofitExtenderOverTLS(t *testing.T) {
	dir := t.TempDir()
	// A CA of the extender's own: a serving certificate for 127.0.0.1 and a client certificate
	// for kube-scheduler.
	pki, err := harness.NewPKI(filepath.Join(dir, "extender-pki"))
	if err != nil {
		t.Fatal(err)
	}
	clientCert, clientKey, err := pki.IssueClientCert("kube-scheduler-client", "kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	// topofit serves the pair in tls/, replaced there (rename, as a Secret volume does) to rotate it.
	tlsDir := filepath.Join(dir, "tls")
	servedCert, servedKey := filepath.Join(tlsDir, "tls.crt"), filepath.Join(tlsDir, "tls.key")
	firstSerial := installServingCert(t, pki, "topofit-1", tlsDir)
	serveConfig := filepath.Join(dir, "serve.yaml")
	if err := os.WriteFile(serveConfig, []byte("tlsReloadInterval: 200ms\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	schedulerConfig := filepath.Join(dir, "scheduler-config-tls.yaml")
	writeTLSSchedulerConfig(t, schedulerConfig, map[string]any{
		"caFile": pki.CACert, "certFile": clientCert, "keyFile": clientKey,
	})

	ext := &harness.TopofitExtender{Binary: harness.TopofitBinary(t), Args: []string{"--config", serveConfig,
		"--tls-cert-file", servedCert, "--tls-private-key-file", servedKey, "--client-ca-file", pki.CACert}}
	c := harness.Start(t, harness.Options{SchedulerConfig: schedulerConfig, Extender: ext})
	rendered, err := os.ReadFile(c.Scheduler.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rendered), "https://"+c.ExtenderAddr+"/scheduler") {
		t.Fatalf("the scheduler does not call https://%s/scheduler:\n%s", c.ExtenderAddr, rendered)
	}
	c.CreateNodes(context.Background(),
		harness.GPUNode("dgx1", 8, "dgx1-v100"),
		harness.GPUNode("pcie", 8, "pcie-8-dual-socket"))
	time.Sleep(500 * time.Millisecond)

	// Six pods of 1, 2 and 4 GPUs, created at once: 12 of the 16 GPUs, so every order of binding
	// fits; after the certificate's rotation three more take 3 of the last 4.
	held := map[string]string{} // node/gpu -> pod
	batch := func(first int, sizes []int) {
		for i, n := range sizes {
			mustCreate(t, c, harness.GPUPod(fmt.Sprintf("tls-%d", first+i), n))
		}
		for i, n := range sizes {
			name := fmt.Sprintf("tls-%d", first+i)
			node, ids := scheduled(t, c, name, n, 8)
			for _, id := range ids {
				key := fmt.Sprintf("%s/%d", node, id)
				if other, ok := held[key]; ok {
					t.Fatalf("GPU %s given to %s and %s", key, other, name)
				}
				held[key] = name
			}
		}
	}
	batch(0, []int{4, 2, 1, 1, 2, 2})
	// The binds went through topofit (its annotation is on every pod, checked by scheduled) over
	// the TLS connection: the extender's log shows TLS on.
	if log, err := os.ReadFile(ext.LogPath()); err != nil || !strings.Contains(string(log), "client certificates required") {
		t.Errorf("topofit's log does not show TLS with client certificates (err %v)", err)
	}

	// What else reaches the port is refused.
	caPool := x509.NewCertPool()
	caData, err := os.ReadFile(pki.CACert)
	if err != nil {
		t.Fatal(err)
	}
	caPool.AppendCertsFromPEM(caData)
	post := func(cfg *tls.Config) error {
		client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := client.Post("https://"+c.ExtenderAddr+"/scheduler/filter", "application/json",
			strings.NewReader(`{"Pod":{"metadata":{"name":"x","namespace":"e2e","uid":"x"}},"Nodes":null,"NodeNames":[]}`))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	schedulerPair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := post(&tls.Config{RootCAs: caPool, Certificates: []tls.Certificate{schedulerPair}}); err != nil {
		t.Errorf("a client with kube-scheduler's certificate: %v, want served", err)
	}
	servingSerial := func() int64 {
		conn, err := tls.Dial("tcp", c.ExtenderAddr, &tls.Config{RootCAs: caPool, Certificates: []tls.Certificate{schedulerPair}})
		if err != nil {
			t.Fatalf("TLS dial: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	if got := servingSerial(); got != firstSerial {
		t.Fatalf("topofit serves serial %d, want %d", got, firstSerial)
	}

	// Rotation: a new pair replaces the files; new connections get it within the reload interval,
	// and kube-scheduler goes on binding through topofit.
	secondSerial := installServingCert(t, pki, "topofit-2", tlsDir)
	deadline := time.Now().Add(10 * time.Second)
	for servingSerial() != secondSerial && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if got := servingSerial(); got != secondSerial {
		t.Fatalf("10 s after the rotation topofit serves serial %d, want %d", got, secondSerial)
	}
	batch(6, []int{1, 1, 1})
	if log, err := os.ReadFile(ext.LogPath()); err != nil || !strings.Contains(string(log), "TLS certificate reloaded") {
		t.Errorf("topofit's log does not show the reload (err %v)", err)
	}
	if err := post(&tls.Config{RootCAs: caPool}); err == nil {
		t.Errorf("a client without a certificate was served")
	} else {
		t.Logf("no client certificate: %v", err)
	}
	other, err := harness.NewPKI(filepath.Join(dir, "other-pki"))
	if err != nil {
		t.Fatal(err)
	}
	strangerCert, strangerKey, err := other.IssueClientCert("stranger", "kube-scheduler")
	if err != nil {
		t.Fatal(err)
	}
	strangerPair, err := tls.LoadX509KeyPair(strangerCert, strangerKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := post(&tls.Config{RootCAs: caPool, Certificates: []tls.Certificate{strangerPair}}); err == nil {
		t.Errorf("a client with another CA's certificate was served")
	} else {
		t.Logf("another CA's client certificate: %v", err)
	}
	conn, err := net.DialTimeout("tcp", c.ExtenderAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	reply, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(reply), "HTTP/1.0 400") || !strings.Contains(string(reply), "HTTP request to an HTTPS server") {
		t.Errorf("plain HTTP got %q, want a 400 saying the port speaks HTTPS", reply)
	}
}

// writeTLSSchedulerConfig writes manifests/base/scheduler-config.yaml with its extenders (both entries
// call the same topofit) switched to HTTPS with tlsConfig.
func writeTLSSchedulerConfig(t *testing.T, path string, tlsConfig map[string]any) {
	t.Helper()
	writeSchedulerConfig(t, path, func(cfg map[string]any) {
		exts, _ := cfg["extenders"].([]any)
		if len(exts) == 0 {
			t.Fatal("the deployed scheduler configuration has no extender")
		}
		for _, x := range exts {
			e := x.(map[string]any)
			e["enableHTTPS"] = true
			e["tlsConfig"] = tlsConfig
		}
	})
}

// installServingCert issues a serving certificate for 127.0.0.1 named name and moves it and its key
// to dir/tls.crt and dir/tls.key (key first, each by a rename); it returns the certificate's serial.
func installServingCert(t *testing.T, pki *harness.PKI, name, dir string) int64 {
	t.Helper()
	cert, key, serial, err := pki.IssueServingCert(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, mv := range [][2]string{{key, "tls.key"}, {cert, "tls.crt"}} {
		if err := os.Rename(mv[0], filepath.Join(dir, mv[1])); err != nil {
			t.Fatal(err)
		}
	}
	return serial
}
