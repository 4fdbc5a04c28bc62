#include "extender/node/plugin/registrar.h"

#include <unistd.h>

#include <mutex>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/grpc_util.h"

namespace topofit::node {
namespace {

class RegistrationService final : public v1beta1::Registration::Service {
 public:
  RegistrationService(std::string resource, Registrar::OnRegister on_register)
      : resource_(std::move(resource)), on_register_(std::move(on_register)) {}

  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req, v1beta1::Empty*) override {
    if (req->version() != "v1beta1") {
      return {grpc::StatusCode::INVALID_ARGUMENT, "unsupported version \"" + req->version() + "\", expected v1beta1"};
    }
    if (req->resource_name() != resource_) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "resource \"" + req->resource_name() + "\" is not served here (expected " + resource_ + ")"};
    }
    if (req->endpoint().empty() || req->endpoint().find('/') != std::string::npos) {
      return {grpc::StatusCode::INVALID_ARGUMENT, "endpoint \"" + req->endpoint() + "\" must be a bare socket file name"};
    }
    BackendRegistration r{req->endpoint(), req->resource_name(), req->options().get_preferred_allocation_available(),
                          req->options().pre_start_required()};
    Status st = on_register_(r);
    if (!st.ok()) return {grpc::StatusCode::UNAVAILABLE, st.error()};
    return grpc::Status::OK;
  }

 private:
  std::string resource_;
  Registrar::OnRegister on_register_;
};

}  // namespace

struct Registrar::Impl {
  RegistrationService service;
  std::unique_ptr<grpc::Server> server;
  std::string path;
  std::mutex mu;
};

Registrar::Registrar(std::string resource, OnRegister on_register)
    : impl_(new Impl{RegistrationService(std::move(resource), std::move(on_register)), nullptr, "", {}}) {}

Registrar::~Registrar() { Stop(); }

Status Registrar::Start(const std::string& socket_path) {
  std::lock_guard lock(impl_->mu);
  if (impl_->server) return Status::Ok();
  // Served under a temporary name, then renamed into place: a plugin that dials as soon as it sees
  // the file (the NVIDIA plugin's inotify watch; a rename reads as a creation to it) finds the socket
  // accepting. A refused first dial would cost it gRPC's 1 s reconnect backoff.
  const std::string tmp = socket_path + ".tmp";
  ::unlink(tmp.c_str());
  ::unlink(socket_path.c_str());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(UnixAddress(tmp), grpc::InsecureServerCredentials());
  builder.RegisterService(&impl_->service);
  impl_->server = builder.BuildAndStart();
  if (!impl_->server) return Error{"registrar: cannot serve on " + tmp};
  if (::rename(tmp.c_str(), socket_path.c_str()) != 0) {
    impl_->server->Shutdown(After(std::chrono::milliseconds(100)));
    impl_->server.reset();
    ::unlink(tmp.c_str());
    return Error{"registrar: cannot rename " + tmp + " to " + socket_path};
  }
  impl_->path = socket_path;
  return Status::Ok();
}

void Registrar::Stop() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->server) return;
  impl_->server->Shutdown(After(std::chrono::milliseconds(500)));
  impl_->server->Wait();
  impl_->server.reset();
  ::unlink(impl_->path.c_str());
}

}  // namespace topofit::node
