#pragma once
// Registrar: topofit's v1beta1.Registration server - the socket the NVIDIA plugin is told is
// kubelet's (its KUBELET_SOCKET). Register() checks what kubelet checks (version "v1beta1", the
// resource topofit serves, an endpoint that is a bare file name) and hands the request to
// `on_register`, whose error is the reply's; a wrong request is INVALID_ARGUMENT with the reason.
// The backend must be serving before it registers (kubelet's rule, 1.6), so on_register may dial
// it at once. Start() removes a stale socket file first and serves under <path>.tmp, renamed to
// <path> once accepting; Stop() removes the socket.

#include <functional>
#include <memory>
#include <string>

#include "base/status.h"

namespace topofit::node {

struct BackendRegistration {
  std::string endpoint;  // Bare file name in the device-plugin directory.
  std::string resource;
  bool preferred_available = false;
  bool pre_start_required = false;
};

class Registrar {
 public:
  using OnRegister = std::function<Status(const BackendRegistration&)>;
  Registrar(std::string resource, OnRegister on_register);
  ~Registrar();

  Status Start(const std::string& socket_path);
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace topofit::node
