package harness

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// Etcd is an etcd server embedded in the test process (go.etcd.io/etcd/server/v3/embed, the
// version that k8s.io/kubernetes pins), listening on loopback ports only.
type Etcd struct {
	ClientURL string
	e         *embed.Etcd
}

// StartEtcd starts a single-member etcd with its data under dir.
func StartEtcd(dir string) (*Etcd, error) {
	clientPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	peerPort, err := FreePort()
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "e2e"
	cfg.Dir = filepath.Join(dir, "etcd")
	cu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	pu := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls = []url.URL{cu}
	cfg.AdvertiseClientUrls = []url.URL{cu}
	cfg.ListenPeerUrls = []url.URL{pu}
	cfg.AdvertisePeerUrls = []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.Logger = "zap"
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cfg.UnsafeNoFsync = true // test data only: much faster on slow disks
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd failed: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd not ready after 60s")
	}
	return &Etcd{ClientURL: cu.String(), e: e}, nil
}

// Stop stops etcd and waits for it.
func (e *Etcd) Stop() {
	if e != nil && e.e != nil {
		e.e.Close()
		e.e = nil
	}
}
