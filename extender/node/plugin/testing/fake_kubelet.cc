#include "extender/node/plugin/testing/fake_kubelet.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "deviceplugin/v1beta1/api.grpc.pb.h"
#include "extender/node/plugin/grpc_util.h"
#include "extender/node/plugin/preferred_request_wire.h"
#include "podresources/v1/api.grpc.pb.h"

namespace topofit::node::testing {

struct FakeKubelet::Impl final : public v1beta1::Registration::Service, public v1::PodResourcesLister::Service {
  Impl(std::string d, std::string pr, uint64_t seed) : dir(std::move(d)), pr_path(std::move(pr)), model(seed) {}

  // --- Registration ---
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req, v1beta1::Empty*) override {
    if (req->version() != "v1beta1") return {grpc::StatusCode::INVALID_ARGUMENT, "bad version"};
    auto stub = std::shared_ptr<v1beta1::DevicePlugin::Stub>(
        v1beta1::DevicePlugin::NewStub(UnixChannel(JoinPath(dir, req->endpoint()))));
    v1beta1::DevicePluginOptions options;
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(After(std::chrono::seconds(10)));
      ctx.set_wait_for_ready(true);
      v1beta1::Empty empty;
      grpc::Status st = stub->GetDevicePluginOptions(&ctx, empty, &options);
      if (!st.ok()) return {grpc::StatusCode::UNAVAILABLE, "cannot dial plugin: " + st.error_message()};
    }
    DropPlugin();
    std::lock_guard lock(mu);
    plugin = stub;
    plugin_options = options;
    plugin_endpoint = req->endpoint();
    ++registrations;
    auto ctx = std::make_shared<grpc::ClientContext>();
    watch_ctx = ctx;
    watcher = std::thread([this, stub, ctx] { Watch(stub, ctx); });
    return grpc::Status::OK;
  }

  void Watch(std::shared_ptr<v1beta1::DevicePlugin::Stub> stub, std::shared_ptr<grpc::ClientContext> ctx) {
    v1beta1::Empty empty;
    auto reader = stub->ListAndWatch(ctx.get(), empty);
    v1beta1::ListAndWatchResponse resp;
    while (reader->Read(&resp)) {
      std::map<std::string, bool> health;
      for (const auto& d : resp.devices()) health[d.id()] = d.health() == "Healthy";
      std::lock_guard lock(mu);
      model.SetDevices(health);
      cv.notify_all();
    }
    reader->Finish();
    // PluginDisconnected: every device of the resource unhealthy at once.
    std::lock_guard lock(mu);
    if (watch_ctx == ctx) {
      std::map<std::string, bool> health;
      for (const auto& id : AllIds()) health[id] = false;
      model.SetDevices(health);
      plugin.reset();
    }
  }

  std::vector<std::string> AllIds() const { return model.devices(); }

  void DropPlugin() {
    std::thread t;
    {
      std::lock_guard lock(mu);
      if (watch_ctx) watch_ctx->TryCancel();
      watch_ctx.reset();
      plugin.reset();
      t = std::move(watcher);
    }
    if (t.joinable()) t.join();
  }

  // --- PodResources ---
  void Fill(const std::string& key, const std::string& uid, v1::PodResources* out) const {
    out->set_namespace_(key.substr(0, key.find('/')));
    out->set_name(key.substr(key.find('/') + 1));
    for (const auto& [k, devices] : model.holdings()) {
      if (k.first != uid) continue;
      auto* c = out->add_containers();
      c->set_name(k.second);
      auto* d = c->add_devices();
      d->set_resource_name("nvidia.com/gpu");
      for (const auto& id : devices) d->add_device_ids(id);
    }
  }
  // kubelet's rate limit (x/time/rate's token bucket): false when no token is left. mu held.
  bool Token() {
    if (limit_qps <= 0) return true;
    auto now = std::chrono::steady_clock::now();
    tokens = std::min<double>(limit_burst, tokens + limit_qps * std::chrono::duration<double>(now - refilled).count());
    refilled = now;
    if (tokens < 1) {
      ++refused;
      return false;
    }
    tokens -= 1;
    return true;
  }
  static grpc::Status Exhausted() { return {grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit"}; }

  grpc::Status Get(grpc::ServerContext*, const v1::GetPodResourcesRequest* req, v1::GetPodResourcesResponse* out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(get_delay_ms.load()));
    return DoGet(req, out);
  }
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*, v1::ListPodResourcesResponse* out) override {
    return DoList(out);
  }
  grpc::Status GetAllocatableResources(grpc::ServerContext*, const v1::AllocatableResourcesRequest*,
                                       v1::AllocatableResourcesResponse* out) override {
    return DoAllocatable(out);
  }
  grpc::Status DoGet(const v1::GetPodResourcesRequest* req, v1::GetPodResourcesResponse* out) {
    std::lock_guard lock(mu);
    if (!Token()) return Exhausted();
    ++gets;
    if (refuse_gets > 0) {
      --refuse_gets;
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, "rejected by rate limit"};
    }
    std::string key = req->pod_namespace() + "/" + req->pod_name();
    auto it = model.known().find(key);
    if (it == model.known().end()) return {grpc::StatusCode::NOT_FOUND, "pod " + key + " not found"};
    Fill(key, it->second, out->mutable_pod_resources());
    return grpc::Status::OK;
  }
  grpc::Status DoList(v1::ListPodResourcesResponse* out) {
    std::lock_guard lock(mu);
    if (!Token()) return Exhausted();
    for (const auto& [key, uid] : model.known()) Fill(key, uid, out->add_pod_resources());
    return grpc::Status::OK;
  }
  grpc::Status DoAllocatable(v1::AllocatableResourcesResponse* out) {
    std::lock_guard lock(mu);
    if (!Token()) return Exhausted();
    auto* d = out->add_devices();
    d->set_resource_name("nvidia.com/gpu");
    for (const auto& id : AllIds()) d->add_device_ids(id);
    return grpc::Status::OK;
  }

  Status Serve() {
    ::unlink(JoinPath(dir, "kubelet.sock").c_str());
    grpc::ServerBuilder b;
    b.AddListeningPort(UnixAddress(JoinPath(dir, "kubelet.sock")), grpc::InsecureServerCredentials());
    b.RegisterService(static_cast<v1beta1::Registration::Service*>(this));
    reg_server = b.BuildAndStart();
    if (!reg_server) return Error{"fake kubelet: cannot serve kubelet.sock"};
    return Status::Ok();
  }

  std::string dir, pr_path;
  mutable std::mutex mu;  // The books (model) and the plugin; released around RPCs during Admit.
  std::condition_variable cv;
  std::mutex admit_mu;    // Serial admission.
  KubeletModel model;
  std::shared_ptr<v1beta1::DevicePlugin::Stub> plugin;
  v1beta1::DevicePluginOptions plugin_options;
  std::string plugin_endpoint;
  std::shared_ptr<grpc::ClientContext> watch_ctx;
  std::thread watcher;
  std::unique_ptr<grpc::Server> reg_server, pr_server;
  std::map<KubeletModel::Key, std::map<std::string, std::string>> envs;
  int registrations = 0, preferred_rpcs = 0, allocate_rpcs = 0, gets = 0, refuse_gets = 0, refused = 0;
  std::atomic<int64_t> get_delay_ms{0};
  double limit_qps = 0, limit_burst = 0, tokens = 0;
  std::chrono::steady_clock::time_point refilled;
};

FakeKubelet::FakeKubelet(std::string dir, std::string pod_resources_path, uint64_t seed)
    : impl_(std::make_unique<Impl>(std::move(dir), std::move(pod_resources_path), seed)) {}
FakeKubelet::~FakeKubelet() { Stop(); }

Status FakeKubelet::Start() {
  Status st = impl_->Serve();
  if (!st.ok()) return st;
  ::unlink(impl_->pr_path.c_str());
  grpc::ServerBuilder b;
  b.AddListeningPort(UnixAddress(impl_->pr_path), grpc::InsecureServerCredentials());
  b.RegisterService(static_cast<v1::PodResourcesLister::Service*>(impl_.get()));
  // kubelet (Go) serves each Get on a goroutine. gRPC C++'s sync server starts a thread per request
  // that finds no idle poller and ends threads past its max pollers (default 2): a wave of
  // concurrent Gets (matcher.h, kViewWave) would start and end threads on every call. Keep them.
  // (Its callback API measured more context switches per call here than this.)
  b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 8);
  impl_->pr_server = b.BuildAndStart();
  if (!impl_->pr_server) return Error{"fake kubelet: cannot serve " + impl_->pr_path};
  return Status::Ok();
}

void FakeKubelet::Stop() {
  impl_->DropPlugin();
  for (auto* s : {&impl_->reg_server, &impl_->pr_server}) {
    if (*s) {
      (*s)->Shutdown(After(std::chrono::milliseconds(200)));
      (*s)->Wait();
      s->reset();
    }
  }
}

void FakeKubelet::Restart() {
  impl_->DropPlugin();
  if (impl_->reg_server) {
    impl_->reg_server->Shutdown(After(std::chrono::milliseconds(200)));
    impl_->reg_server->Wait();
    impl_->reg_server.reset();
  }
  // CleanupPluginDirectory: every socket in the directory goes.
  if (DIR* d = ::opendir(impl_->dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 5 && name.substr(name.size() - 5) == ".sock") ::unlink(JoinPath(impl_->dir, name).c_str());
    }
    ::closedir(d);
  }
  {
    std::lock_guard lock(impl_->mu);
    std::map<std::string, bool> health;
    for (const auto& id : impl_->AllIds()) health[id] = false;
    impl_->model.SetDevices(health);
  }
  (void)impl_->Serve();
}

void FakeKubelet::LimitPodResources(double qps, int burst) {
  std::lock_guard lock(impl_->mu);
  impl_->limit_qps = qps;
  impl_->limit_burst = burst;
  impl_->tokens = burst;
  impl_->refilled = std::chrono::steady_clock::now();
}

int FakeKubelet::pod_resources_refused() const {
  std::lock_guard lock(impl_->mu);
  return impl_->refused;
}

bool FakeKubelet::WaitForDevices(std::chrono::milliseconds timeout) {
  std::unique_lock lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] { return impl_->plugin && !impl_->model.Available().empty(); });
}

Status FakeKubelet::Admit(const NodePod& pod) {
  std::lock_guard serial(impl_->admit_mu);
  std::unique_lock lock(impl_->mu);
  if (!impl_->plugin) return Error{"cannot allocate unregistered device nvidia.com/gpu"};
  auto stub = impl_->plugin;
  bool preferred_available = impl_->plugin_options.get_preferred_allocation_available();
  std::string current_container;
  auto preferred = [&](const PreferredRequest& r) -> std::optional<DeviceList> {
    if (!preferred_available) return DeviceList{};
    v1beta1::PreferredAllocationRequest req;
    AddContainerRequest(req, r);
    v1beta1::PreferredAllocationResponse resp;
    lock.unlock();
    grpc::ClientContext ctx;  // Kubelet sets no deadline; the test bounds it.
    ctx.set_deadline(After(std::chrono::seconds(30)));
    grpc::Status st = stub->GetPreferredAllocation(&ctx, req, &resp);
    lock.lock();
    ++impl_->preferred_rpcs;
    if (!st.ok() || resp.container_responses_size() == 0) return std::nullopt;
    const auto& ids = resp.container_responses(0).deviceids();
    return DeviceList(ids.begin(), ids.end());
  };
  int container_index = 0;
  auto allocate = [&](const DeviceList& devices) {
    v1beta1::AllocateRequest req;
    auto* c = req.add_container_requests();
    for (const auto& id : devices) c->add_devices_ids(id);
    v1beta1::AllocateResponse resp;
    lock.unlock();
    grpc::ClientContext ctx;
    ctx.set_deadline(After(std::chrono::seconds(30)));
    grpc::Status st = stub->Allocate(&ctx, req, &resp);
    lock.lock();
    ++impl_->allocate_rpcs;
    if (!st.ok() || resp.container_responses_size() == 0) return false;
    // The container being allocated is the pod's first without devices, in order.
    for (const auto& pc : pod.containers) {
      if (!impl_->model.holdings().count({pod.uid, pc.name})) {
        impl_->envs[{pod.uid, pc.name}] = {resp.container_responses(0).envs().begin(),
                                           resp.container_responses(0).envs().end()};
        break;
      }
    }
    ++container_index;
    return true;
  };
  return impl_->model.Admit(pod, preferred, allocate);
}

void FakeKubelet::Remove(const std::string& uid) {
  std::lock_guard lock(impl_->mu);
  impl_->model.Remove(uid);
}

std::map<KubeletModel::Key, DeviceList> FakeKubelet::Holdings() const {
  std::lock_guard lock(impl_->mu);
  return impl_->model.holdings();
}
DeviceList FakeKubelet::Available() const {
  std::lock_guard lock(impl_->mu);
  return impl_->model.Available();
}
std::map<std::string, std::string> FakeKubelet::Envs(const std::string& uid, const std::string& container) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->envs.find({uid, container});
  return it == impl_->envs.end() ? std::map<std::string, std::string>{} : it->second;
}
std::string FakeKubelet::endpoint() const {
  std::lock_guard lock(impl_->mu);
  return impl_->plugin_endpoint;
}
int FakeKubelet::registrations() const {
  std::lock_guard lock(impl_->mu);
  return impl_->registrations;
}
int FakeKubelet::preferred_rpcs() const {
  std::lock_guard lock(impl_->mu);
  return impl_->preferred_rpcs;
}
int FakeKubelet::allocate_rpcs() const {
  std::lock_guard lock(impl_->mu);
  return impl_->allocate_rpcs;
}

void FakeKubelet::RefuseGets(int n) {
  std::lock_guard lock(impl_->mu);
  impl_->refuse_gets = n;
}

void FakeKubelet::DelayGets(std::chrono::milliseconds delay) { impl_->get_delay_ms = delay.count(); }

}  // namespace topofit::node::testing
