#include "extender/node/plugin/testing/fake_backend.h"

#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/grpc_util.h"
#include "topology/topo_parser.h"

namespace topofit::node {

std::string FakeUuid(int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "GPU-fa4e0000-0000-4000-8000-%012x", index);
  return buf;
}

namespace {

struct FakeDevice {
  std::string id;
  std::optional<int> numa;
  bool healthy = true;
};

class FakeService final : public v1beta1::DevicePlugin::Service {
 public:
  explicit FakeService(std::vector<FakeDevice> devices) : devices_(std::move(devices)) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const v1beta1::Empty*,
                                      v1beta1::DevicePluginOptions* out) override {
    out->set_pre_start_required(false);
    out->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const v1beta1::Empty*,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override {
    uint64_t sent = 0;
    std::unique_lock lock(mu_);
    while (!stopping_ && !ctx->IsCancelled()) {
      if (sent != version_) {
        v1beta1::ListAndWatchResponse resp;
        for (const auto& d : devices_) {
          auto* dev = resp.add_devices();
          dev->set_id(d.id);
          dev->set_health(d.healthy ? "Healthy" : "Unhealthy");
          if (d.numa) dev->mutable_topology()->add_nodes()->set_id(*d.numa);
        }
        sent = version_;
        lock.unlock();
        if (!writer->Write(resp)) return grpc::Status::OK;
        lock.lock();
        continue;
      }
      cv_.wait_for(lock, std::chrono::milliseconds(200));
    }
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*, const v1beta1::PreferredAllocationRequest* req,
                                      v1beta1::PreferredAllocationResponse* out) override {
    ++preferred_calls_;
    for (const auto& c : req->container_requests()) {
      auto* resp = out->add_container_responses();
      std::vector<std::string> chosen(c.must_include_deviceids().begin(), c.must_include_deviceids().end());
      for (const auto& id : c.available_deviceids()) {
        if (static_cast<int>(chosen.size()) >= c.allocation_size()) break;
        if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) chosen.push_back(id);
      }
      for (const auto& id : chosen) resp->add_deviceids(id);
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const v1beta1::AllocateRequest* req,
                        v1beta1::AllocateResponse* out) override {
    ++allocate_calls_;
    for (const auto& c : req->container_requests()) {
      std::string visible;
      for (const auto& id : c.devices_ids()) {
        if (!Known(id)) return {grpc::StatusCode::INVALID_ARGUMENT, "unknown device " + id};
        visible += (visible.empty() ? "" : ",") + id;
      }
      (*out->add_container_responses()->mutable_envs())["NVIDIA_VISIBLE_DEVICES"] = visible;
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const v1beta1::PreStartContainerRequest*,
                                 v1beta1::PreStartContainerResponse*) override {
    return grpc::Status::OK;
  }

  void SetHealthy(const std::string& id, bool healthy) {
    std::lock_guard lock(mu_);
    for (auto& d : devices_) {
      if (d.id == id) d.healthy = healthy;
    }
    ++version_;
    cv_.notify_all();
  }
  void Shutdown() {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  void Restart() {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  std::vector<std::string> Ids() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& d : devices_) out.push_back(d.id);
    return out;
  }

  std::atomic<int> preferred_calls_{0};
  std::atomic<int> allocate_calls_{0};

 private:
  bool Known(const std::string& id) const {
    std::lock_guard lock(mu_);
    return std::any_of(devices_.begin(), devices_.end(), [&](const FakeDevice& d) { return d.id == id; });
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<FakeDevice> devices_;
  uint64_t version_ = 1;
  bool stopping_ = false;
};

}  // namespace

struct FakeBackend::Impl {
  std::unique_ptr<FakeService> service;
  std::unique_ptr<grpc::Server> server;
  std::string socket_path;
  std::mutex mu;
};

FakeBackend::FakeBackend() : impl_(std::make_unique<Impl>()) {}
FakeBackend::~FakeBackend() { Stop(); }

Result<std::unique_ptr<FakeBackend>> FakeBackend::FromTopo(std::string_view topo_text) {
  auto m = ParseTopoMatrix(topo_text);
  if (!m) return Error{"fake backend: " + m.error()};
  std::vector<FakeDevice> devices;
  for (int i = 0; i < m->gpu_count(); ++i) {
    std::optional<int> numa = i < static_cast<int>(m->numa_affinity.size()) ? m->numa_affinity[i] : std::nullopt;
    devices.push_back({FakeUuid(i), numa, true});
  }
  std::unique_ptr<FakeBackend> b(new FakeBackend());
  b->impl_->service = std::make_unique<FakeService>(std::move(devices));
  return b;
}

Status FakeBackend::Start(const std::string& socket_path) {
  std::lock_guard lock(impl_->mu);
  if (impl_->server) return Status::Ok();
  ::unlink(socket_path.c_str());
  impl_->service->Restart();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(UnixAddress(socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(impl_->service.get());
  impl_->server = builder.BuildAndStart();
  if (!impl_->server) return Error{"fake backend: cannot serve on " + socket_path};
  impl_->socket_path = socket_path;
  return Status::Ok();
}

void FakeBackend::Stop() {
  std::lock_guard lock(impl_->mu);
  if (!impl_->server) return;
  impl_->service->Shutdown();
  impl_->server->Shutdown(After(std::chrono::milliseconds(500)));
  impl_->server->Wait();
  impl_->server.reset();
  ::unlink(impl_->socket_path.c_str());
}

Status FakeBackend::Register(const std::string& registrar_path, const std::string& resource) {
  std::string endpoint;
  {
    std::lock_guard lock(impl_->mu);
    endpoint = impl_->socket_path.substr(impl_->socket_path.rfind('/') + 1);
  }
  auto stub = v1beta1::Registration::NewStub(UnixChannel(registrar_path));
  grpc::ClientContext ctx;
  ctx.set_deadline(After(std::chrono::seconds(10)));
  ctx.set_wait_for_ready(true);
  v1beta1::RegisterRequest req;
  req.set_version("v1beta1");
  req.set_endpoint(endpoint);
  req.set_resource_name(resource);
  req.mutable_options()->set_get_preferred_allocation_available(true);
  v1beta1::Empty empty;
  grpc::Status st = stub->Register(&ctx, req, &empty);
  if (!st.ok()) return Error{"fake backend: register to " + registrar_path + ": " + st.error_message()};
  return Status::Ok();
}

void FakeBackend::SetHealthy(const std::string& id, bool healthy) { impl_->service->SetHealthy(id, healthy); }
std::vector<std::string> FakeBackend::uuids() const { return impl_->service->Ids(); }
int FakeBackend::preferred_calls() const { return impl_->service->preferred_calls_; }
int FakeBackend::allocate_calls() const { return impl_->service->allocate_calls_; }

namespace {

class InProcess final : public LocalBackend {
 public:
  InProcess(std::unique_ptr<FakeBackend> backend, std::string socket_path)
      : backend_(std::move(backend)), socket_path_(std::move(socket_path)) {}
  Status Start(const std::string& registrar_path, const std::string& resource) override {
    Status st = backend_->Start(socket_path_);
    if (!st.ok()) return st;
    return backend_->Register(registrar_path, resource);
  }
  void Stop() override { backend_->Stop(); }

 private:
  std::unique_ptr<FakeBackend> backend_;
  std::string socket_path_;
};

}  // namespace

std::unique_ptr<LocalBackend> InProcessBackend(std::unique_ptr<FakeBackend> backend, std::string socket_path) {
  return std::make_unique<InProcess>(std::move(backend), std::move(socket_path));
}

}  // namespace topofit::node
