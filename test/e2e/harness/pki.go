package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// PKI holds the files the control plane needs: a CA, the apiserver's serving cert and key, and
// the service-account signing key. All PEM files live in Dir.
type PKI struct {
	Dir            string
	CACert         string // path
	CAData         []byte // PEM
	ServingCert    string
	ServingKey     string
	ServiceAccount string // RSA private key; the apiserver derives the public key from it

	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

// NewPKI writes a fresh CA, a serving certificate for 127.0.0.1/localhost signed by it, and an RSA
// service-account key into dir.
func NewPKI(dir string) (*PKI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &PKI{Dir: dir,
		CACert:         filepath.Join(dir, "ca.crt"),
		ServingCert:    filepath.Join(dir, "apiserver.crt"),
		ServingKey:     filepath.Join(dir, "apiserver.key"),
		ServiceAccount: filepath.Join(dir, "sa.key"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "topofit-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	p.caCert, p.caKey, p.serial = caCert, caKey, 100
	p.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	if err := os.WriteFile(p.CACert, p.CAData, 0o600); err != nil {
		return nil, err
	}

	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(p.ServingCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), 0o600); err != nil {
		return nil, err
	}
	if err := writeECKey(p.ServingKey, srvKey); err != nil {
		return nil, err
	}

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saDER := x509.MarshalPKCS1PrivateKey(saKey)
	if err := os.WriteFile(p.ServiceAccount, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: saDER}), 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

func writeECKey(path string, k *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return fmt.Errorf("marshal key: %w", err)
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// IssueClientCert writes a client certificate (extended key usage clientAuth) for commonName,
// signed by the CA, and its key into Dir as NAME.crt and NAME.key; it returns both paths.
func (p *PKI) IssueClientCert(name, commonName string) (certPath, keyPath string, err error) {
	return p.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: commonName},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// IssueServingCert writes a serving certificate (extended key usage serverAuth) for 127.0.0.1 and
// localhost, signed by the CA, into Dir as NAME.crt and NAME.key; it returns both paths and the
// certificate's serial number.
func (p *PKI) IssueServingCert(name string) (certPath, keyPath string, serial int64, err error) {
	certPath, keyPath, err = p.issue(name, &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	})
	return certPath, keyPath, p.serial, err
}

// issue signs tmpl (serial and validity filled in) for a fresh EC P-256 key and writes both.
func (p *PKI) issue(name string, tmpl *x509.Certificate) (certPath, keyPath string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	p.serial++
	now := time.Now()
	tmpl.SerialNumber = big.NewInt(p.serial)
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(24*time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return "", "", err
	}
	certPath, keyPath = filepath.Join(p.Dir, name+".crt"), filepath.Join(p.Dir, name+".key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	return certPath, keyPath, writeECKey(keyPath, key)
}

// HTTPClient is a client that trusts this PKI's CA, with the timeout given. With verify false it skips
// the server's certificate check (kube-scheduler's own self-signed serving certificate).
func (p *PKI) HTTPClient(timeout time.Duration, verify bool) *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData)
	return &http.Client{Timeout: timeout,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, InsecureSkipVerify: !verify}}}
}
