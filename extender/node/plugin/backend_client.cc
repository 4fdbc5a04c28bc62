#include "extender/node/plugin/backend_client.h"

#include "base/log.h"
#include "extender/node/plugin/grpc_util.h"

namespace topofit::node {

BackendClient::~BackendClient() { Close(); }

Status BackendClient::Connect(const std::string& socket_path, std::chrono::milliseconds timeout) {
  auto stub = std::shared_ptr<v1beta1::DevicePlugin::Stub>(v1beta1::DevicePlugin::NewStub(UnixChannel(socket_path)));
  v1beta1::DevicePluginOptions options;
  const auto deadline = After(timeout);
  for (;;) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    ctx.set_wait_for_ready(true);
    v1beta1::Empty empty;
    grpc::Status st = stub->GetDevicePluginOptions(&ctx, empty, &options);
    if (st.ok()) break;
    // UNAVAILABLE with time left: the connection broke under the call (the backend restarting as it
    // registers); the channel dials again. Anything else, or no time left, is the answer.
    constexpr auto kRetry = std::chrono::milliseconds(50);
    if (st.error_code() != grpc::StatusCode::UNAVAILABLE || std::chrono::system_clock::now() + kRetry >= deadline) {
      return Error{"backend " + socket_path + ": GetDevicePluginOptions: " + st.error_message()};
    }
    std::this_thread::sleep_for(kRetry);
  }
  Close();
  std::lock_guard lock(mu_);
  stub_ = stub;
  path_ = socket_path;
  options_ = options;
  listed_ = false;
  uint64_t generation = ++generation_;
  watcher_ = std::thread([this, generation] { Watch(generation); });
  return Status::Ok();
}

void BackendClient::Close() {
  std::thread t;
  {
    std::lock_guard lock(mu_);
    ++generation_;
    if (watch_ctx_) watch_ctx_->TryCancel();
    t = std::move(watcher_);
    cv_.notify_all();
  }
  if (t.joinable()) t.join();
  std::lock_guard lock(mu_);
  stub_.reset();
  if (connected_) ++version_;
  connected_ = false;
  cv_.notify_all();
}

void BackendClient::Watch(uint64_t generation) {
  while (true) {
    std::shared_ptr<v1beta1::DevicePlugin::Stub> stub;
    auto ctx = std::make_shared<grpc::ClientContext>();
    {
      std::lock_guard lock(mu_);
      if (generation != generation_) return;
      stub = stub_;
      watch_ctx_ = ctx;
    }
    v1beta1::Empty empty;
    auto reader = stub->ListAndWatch(ctx.get(), empty);
    v1beta1::ListAndWatchResponse resp;
    while (reader->Read(&resp)) {
      std::lock_guard lock(mu_);
      devices_.assign(resp.devices().begin(), resp.devices().end());
      connected_ = true;
      listed_ = true;
      ++version_;
      cv_.notify_all();
    }
    grpc::Status st = reader->Finish();
    std::unique_lock lock(mu_);
    if (generation != generation_) return;
    if (connected_) {
      Log(LogLevel::kWarn, "backend ListAndWatch ended", {{"socket", path_}, {"error", st.error_message()}});
      connected_ = false;
      ++version_;
      cv_.notify_all();
    }
    cv_.wait_for(lock, std::chrono::milliseconds(500), [&] { return generation != generation_; });
  }
}

bool BackendClient::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}
bool BackendClient::ever_listed() const {
  std::lock_guard lock(mu_);
  return listed_;
}
v1beta1::DevicePluginOptions BackendClient::options() const {
  std::lock_guard lock(mu_);
  return options_;
}
std::vector<v1beta1::Device> BackendClient::devices() const {
  std::lock_guard lock(mu_);
  return devices_;
}
uint64_t BackendClient::version() const {
  std::lock_guard lock(mu_);
  return version_;
}
void BackendClient::Wake() {
  std::lock_guard lock(mu_);
  ++version_;
  cv_.notify_all();
}

uint64_t BackendClient::WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return version_ != seen; });
  return version_;
}

std::shared_ptr<v1beta1::DevicePlugin::Stub> BackendClient::stub() const {
  std::lock_guard lock(mu_);
  return stub_;
}

namespace {

// `rpc(stub, ctx)` on the backend, with the deadline set and, for `wait_for_ready`, riding out a
// backend restart up to it; UNAVAILABLE without a call when no backend registered.
template <typename Rpc>
grpc::Status CallBackend(const std::shared_ptr<v1beta1::DevicePlugin::Stub>& stub,
                         std::chrono::system_clock::time_point deadline, bool wait_for_ready, Rpc&& rpc) {
  if (!stub) return {grpc::StatusCode::UNAVAILABLE, "no backend registered"};
  grpc::ClientContext ctx;
  ctx.set_deadline(deadline);
  if (wait_for_ready) ctx.set_wait_for_ready(true);
  return rpc(*stub, ctx);
}

}  // namespace

grpc::Status BackendClient::GetPreferredAllocation(const v1beta1::PreferredAllocationRequest& req,
                                                   v1beta1::PreferredAllocationResponse* resp,
                                                   std::chrono::system_clock::time_point deadline) {
  return CallBackend(stub(), deadline, false, [&](v1beta1::DevicePlugin::Stub& s, grpc::ClientContext& ctx) {
    return s.GetPreferredAllocation(&ctx, req, resp);
  });
}

grpc::Status BackendClient::Allocate(const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp,
                                     std::chrono::system_clock::time_point deadline) {
  return CallBackend(stub(), deadline, true, [&](v1beta1::DevicePlugin::Stub& s, grpc::ClientContext& ctx) {
    return s.Allocate(&ctx, req, resp);
  });
}

grpc::Status BackendClient::PreStartContainer(const v1beta1::PreStartContainerRequest& req,
                                              v1beta1::PreStartContainerResponse* resp,
                                              std::chrono::system_clock::time_point deadline) {
  return CallBackend(stub(), deadline, true, [&](v1beta1::DevicePlugin::Stub& s, grpc::ClientContext& ctx) {
    return s.PreStartContainer(&ctx, req, resp);
  });
}

}  // namespace topofit::node
