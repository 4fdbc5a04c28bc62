#pragma once
// TlsCredentials: the serving certificate, its key and the optional client CA of the extender port,
// as an OpenSSL server context that follows its files.
//
// Load() reads and checks everything once, so a bad file fails start-up with a message naming it:
//   - a file that is missing or unreadable ("--tls-cert-file PATH: cannot open PATH: ...");
//   - no PEM certificate in the certificate file, no (unencrypted) PEM private key in the key file;
//   - a key that does not belong to the certificate;
//   - a client CA file with no certificate, or with one that is not a CA (basicConstraints CA:FALSE
//     or none on a v3 certificate, keyUsage without keyCertSign);
//   - a client CA without a certificate, a certificate without a key and the reverse.
// The certificate file may hold a chain (leaf first, then intermediates). TLS 1.2 at least; ALPN
// offers only http/1.1 (kube-scheduler's Go client asks for h2 first and then speaks HTTP/1.1).
// With a client CA, a client must present a certificate that chains to it and whose extended key
// usage, if it has one, includes clientAuth; without one the handshake fails.
//
// Reloading: Refresh() looks at the files (device, inode, size, modification time; stat follows
// symlinks, so a Kubernetes Secret volume's swap of its ..data link counts) at most once per
// reload_interval. When any changed, the set is loaded again: on success Context() hands out the
// new context to the connections that open afterwards, on failure the old one stays and the error
// is logged once for that state of the files (the next change is tried again; a certificate written
// a moment before its key fails once, then loads). Connections already open keep the context they
// began with: nothing is dropped. Thread-safe.

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/status.h"

namespace topofit::server {

struct TlsFiles {
  std::string cert_file;       // --tls-cert-file: PEM certificate (chain).
  std::string key_file;        // --tls-private-key-file: PEM private key.
  std::string client_ca_file;  // --client-ca-file: PEM CA bundle; "" for no client authentication.

  bool enabled() const { return !cert_file.empty() || !key_file.empty() || !client_ca_file.empty(); }
};

class TlsCredentials {
 public:
  using Clock = std::chrono::steady_clock;

  static Result<std::shared_ptr<TlsCredentials>> Load(const TlsFiles& files, Clock::duration reload_interval);

  // The context new connections use. Never null.
  std::shared_ptr<SSL_CTX> Context() const;
  // Reloads when the files changed and reload_interval passed since the last look; true when a new
  // context was installed. Called by the listener's accept loop.
  bool Refresh();
  // Refresh() without waiting for the interval.
  bool RefreshNow();
  Clock::duration reload_interval() const { return reload_interval_; }
  // Subject and serial number of the certificate in use, for logs and tests.
  std::string Describe() const;

 private:
  struct Stamp {
    bool ok = false;
    unsigned long long dev = 0, ino = 0, size = 0;
    long long mtime_ns = 0;
    bool operator==(const Stamp&) const = default;
  };
  TlsCredentials(TlsFiles files, Clock::duration reload_interval)
      : files_(std::move(files)), reload_interval_(reload_interval) {}
  std::vector<Stamp> Look() const;

  const TlsFiles files_;
  const Clock::duration reload_interval_;
  mutable std::mutex mu_;  // Guards ctx_ and describe_.
  std::shared_ptr<SSL_CTX> ctx_;
  std::string describe_;
  std::mutex refresh_mu_;  // Guards the fields below: one Refresh at a time.
  Clock::time_point next_look_;
  std::vector<Stamp> loaded_;  // The files' state when ctx_ was built.
  std::vector<Stamp> failed_;  // The last state that failed to load (logged once).
};

}  // namespace topofit::server
