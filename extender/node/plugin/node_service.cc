#include "extender/node/plugin/node_service.h"

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "base/files.h"
#include "base/log.h"
#include "extender/node/plugin/backend_client.h"
#include "extender/node/plugin/grpc_util.h"
#include "extender/node/plugin/podresources_client.h"
#include "extender/node/plugin/reconciler.h"
#include "extender/node/plugin/registrar.h"

namespace topofit::node {

struct NodeService::Impl {
  explicit Impl(NodeOptions o)
      : options(std::move(o)),
        pods(options.resource_name),
        kubelet(options.pod_resources_socket, options.resource_name),
        front(FrontOptions{options.node_name, options.preferred_timeout, options.get_timeout}, backend, pods, kubelet),
        registrar(options.resource_name, [this](const BackendRegistration& r) { return OnBackendRegister(r); }) {
    Beat(supervisor_beat);
    Beat(reconciler_beat);
  }

  std::string Path(const std::string& name) const { return JoinPath(options.device_plugin_dir, name); }

  Status OnBackendRegister(const BackendRegistration& r) {
    std::string path = Path(r.endpoint);
    Status st = backend.Connect(path);
    if (!st.ok()) {
      Log(LogLevel::kWarn, "backend registered but cannot be reached", {{"endpoint", path}, {"error", st.error()}});
      return st;
    }
    Log(LogLevel::kInfo, "backend registered", {{"endpoint", path}, {"resource", r.resource}});
    ++counters.backend_registrations;
    return Status::Ok();
  }

  Status StartFront() {
    ::unlink(Path(options.front_socket).c_str());
    grpc::ServerBuilder builder;
    builder.AddListeningPort(UnixAddress(Path(options.front_socket)), grpc::InsecureServerCredentials());
    builder.RegisterService(&front);
    front_server = builder.BuildAndStart();
    if (!front_server) return Error{"cannot serve on " + Path(options.front_socket)};
    front_inode = SocketInode(Path(options.front_socket));
    return Status::Ok();
  }

  void StopFront() {
    if (!front_server) return;
    front.Shutdown();
    backend.Wake();  // The ListAndWatch streams see the shutdown now, not within their 200 ms wait.
    front_server->Shutdown(After(std::chrono::milliseconds(500)));
    front_server->Wait();
    front_server.reset();
    front.Resume();
  }

  Status StartSockets() {
    Status st = registrar.Start(Path(options.registrar_socket));
    if (!st.ok()) return st;
    registrar_inode = SocketInode(Path(options.registrar_socket));
    return StartFront();
  }

  Status StartLocalBackend() { return local_backend->Start(Path(options.registrar_socket), options.resource_name); }

  Status RegisterToKubelet() {
    auto stub = v1beta1::Registration::NewStub(UnixChannel(Path(options.kubelet_socket)));
    grpc::ClientContext ctx;
    ctx.set_deadline(After(std::chrono::seconds(10)));
    v1beta1::RegisterRequest req;
    req.set_version("v1beta1");
    req.set_endpoint(options.front_socket);
    req.set_resource_name(options.resource_name);
    req.mutable_options()->set_get_preferred_allocation_available(true);
    req.mutable_options()->set_pre_start_required(backend.options().pre_start_required());
    v1beta1::Empty empty;
    grpc::Status st = stub->Register(&ctx, req, &empty);
    if (!st.ok()) return Error{"register to kubelet at " + Path(options.kubelet_socket) + ": " + st.error_message()};
    return Status::Ok();
  }

  void Beat(std::atomic<int64_t>& heartbeat) {
    heartbeat = std::chrono::steady_clock::now().time_since_epoch().count();
  }

  void Reconcile() {
    if (options.pod_resources_socket.empty()) return ReconcileOnce();
    const auto start = std::chrono::steady_clock::now();
    ReconcileOnce();
    counters.reconcile_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

  void ReconcileOnce() {
    auto snapshot = pods.Snapshot();
    std::set<std::string> live;
    for (const auto& p : *snapshot) {
      if (!p.terminal()) live.insert(p.uid);
    }
    front.RetainPods(live);
    std::erase_if(last_asked, [&](const auto& e) { return !live.count(e.first); });
    if (options.pod_resources_socket.empty()) return;
    auto list = ListTruth(*snapshot);
    if (!list) return;
    list = FindEnded(*snapshot, std::move(*list));
    ++counters.reconciles;
    if (publisher) Publish(*snapshot, *list);
  }

  // One PodResources List with the regular init containers' holdings added (WithInitHoldings), and
  // the ledger replaced by it (holders named through PodsByKey). nullopt when it failed.
  std::optional<std::vector<PodDevices>> ListTruth(const std::vector<NodePod>& snapshot) {
    const Ledger before = front.LedgerCopy();
    const uint64_t sent_at = before.seq();
    auto list = kubelet.List(std::chrono::seconds(2));
    Beat(reconciler_beat);
    if (!list) {
      ++counters.reconcile_errors;
      if (!reconcile_failing) Log(LogLevel::kWarn, "reconcile: PodResources List failed", {{"error", list.error()}});
      reconcile_failing = true;
      return std::nullopt;
    }
    reconcile_failing = false;
    *list = WithInitHoldings(snapshot, before, std::move(*list));
    const auto by_key = PodsByKey(snapshot);
    std::vector<LedgerEntry> truth;
    for (const auto& pd : *list) {
      auto it = by_key.find(pd.namespace_ + "/" + pd.name);
      std::string uid = it != by_key.end() ? it->second->uid : std::string();
      for (const auto& [container, devices] : pd.containers) truth.push_back({uid, uid.empty() ? "" : container, devices});
    }
    front.ApplyTruth(std::move(truth), sent_at);
    return std::move(*list);
  }

  // Pods kubelet has finished (reconciler.h): a Get for each pod `list` left out that the matcher
  // could pick (at most kViewWave); when kubelet knows one of them, a List again, and those it leaves
  // out are marked ended. Returns the latest List.
  std::vector<PodDevices> FindEnded(const std::vector<NodePod>& snapshot, std::vector<PodDevices> list) {
    const Ledger ledger = front.LedgerCopy();
    const auto ask = PodsToAsk(options.node_name, snapshot, ledger, list, last_asked, kViewWave);
    if (ask.empty()) return list;
    std::vector<ViewQuery> queries;
    for (const NodePod* p : ask) {
      const GpuContainer* next = NextContainer(*p, ledger);
      queries.push_back({p->namespace_, p->name, next->name, next->init && !next->restartable});
      last_asked[p->uid] = counters.reconciles;
    }
    const auto views = kubelet.Views(queries, options.get_timeout);
    if (std::none_of(views.begin(), views.end(), [](KubeletView v) {
          return v == KubeletView::kAdmitting || v == KubeletView::kHasDevices;
        })) {
      return list;
    }
    auto later = ListTruth(snapshot);
    if (!later) return list;
    for (const std::string& uid : EndedPods(ask, views, *later)) {
      front.MarkEnded(uid);
      auto it = std::find_if(ask.begin(), ask.end(), [&](const NodePod* p) { return p->uid == uid; });
      Log(LogLevel::kInfo, "kubelet has ended or rejected the pod: no longer a candidate", {{"pod", (*it)->key()}});
    }
    return std::move(*later);
  }

  void Publish(const std::vector<NodePod>& snapshot, const std::vector<PodDevices>& list) {
    const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                            std::chrono::system_clock::now().time_since_epoch()).count();
    for (const ActualReport& r : ComputeActuals(options.node_name, snapshot, list, now)) {
      Beat(reconciler_beat);  // Each write may take an API server timeout: the loop still turns.
      GpuAssignment timeless = r.actual;
      timeless.unix_seconds = 0;
      const std::string signature = k8s::EncodeGpuAssignment(timeless);
      if (NeedsPublish(r) && published[r.pod->uid] != signature) {
        Status st = publisher->PatchPod(*r.pod, {{kGpuActualAnnotation, k8s::EncodeGpuAssignment(r.actual)}});
        if (st.ok()) {
          published[r.pod->uid] = signature;
        } else {
          Log(LogLevel::kWarn, "cannot publish gpu-actual", {{"pod", r.pod->key()}, {"error", st.error()}});
        }
      }
      if (r.mismatch && mismatched.insert(r.pod->uid).second) {
        ++counters.mismatches;
        Log(LogLevel::kWarn, "pod holds other GPUs than planned", {{"pod", r.pod->key()}, {"detail", r.detail}});
        publisher->PodEvent(*r.pod, "Warning", kReasonMismatch, "GPUs differ from topofit's plan: " + r.detail);
      }
    }
    if (backend.ever_listed()) {
      std::vector<std::string> unhealthy;
      for (const auto& d : backend.devices()) {
        if (d.health() != "Healthy") unhealthy.push_back(d.id());
      }
      std::string signature = EncodeGpuHealth(unhealthy, 0);
      if (signature != published_health) {
        Status st = publisher->PatchNode(options.node_name, {{kGpuHealthAnnotation, EncodeGpuHealth(unhealthy, now)}});
        if (st.ok()) published_health = signature;
        else Log(LogLevel::kWarn, "cannot publish gpu-health", {{"error", st.error()}});
      }
    }
  }

  // Until Stop: a heartbeat on `heartbeat`, `work()` (without mu), then a wait of `period()` (read
  // under mu) that Stop cuts short.
  template <typename Work, typename Period>
  void RunUntilStopped(std::atomic<int64_t>& heartbeat, Work work, Period period) {
    std::unique_lock lock(mu);
    while (!stopping) {
      lock.unlock();
      Beat(heartbeat);
      work();
      lock.lock();
      cv.wait_for(lock, period(), [&] { return stopping; });
    }
  }

  void ReconcileLoop() {
    RunUntilStopped(reconciler_beat, [this] { Reconcile(); },
                    [this]() -> std::chrono::milliseconds { return options.reconcile_interval; });
  }

  // A kubelet restart opens an admission window that closes when topofit registers again: look every
  // 50 ms (a few stat calls), and every 20 ms while not registered, so that topofit registers within
  // that of the backend's device list.
  void Supervise() {
    RunUntilStopped(supervisor_beat, [this] { Tick(); },
                    [this] { return std::chrono::milliseconds(registered ? 50 : 20); });
  }

  void Tick() {
    if (!pods_file.empty()) {
      Status st = pods.PollFile(pods_file);
      if (!st.ok() && st.error() != last_file_error) Log(LogLevel::kWarn, "pods file", {{"error", st.error()}});
      last_file_error = st.ok() ? "" : st.error();
    }
    if (!options.backend_socket.empty() && !backend.connected() && !backend.ever_listed() &&
        std::chrono::steady_clock::now() >= next_backend_try) {
      // --backend-socket: dialled until it answers (a backend that registers is dialled on Register).
      next_backend_try = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      Status st = backend.Connect(options.backend_socket, std::chrono::milliseconds(500));
      if (st.ok()) Log(LogLevel::kInfo, "backend connected", {{"socket", options.backend_socket}});
    }
    ino_t kubelet_now = SocketInode(Path(options.kubelet_socket));
    bool kubelet_restarted = kubelet_now != 0 && kubelet_now != kubelet_inode;
    bool ours_wiped = SocketInode(Path(options.registrar_socket)) != registrar_inode ||
                      SocketInode(Path(options.front_socket)) != front_inode;
    if (kubelet_restarted || ours_wiped) {
      if (kubelet_inode != 0) ++counters.kubelet_restarts;  // Not the first sight of kubelet.sock.
      if (kubelet_inode != 0 || ours_wiped) {
        Log(LogLevel::kInfo, kubelet_restarted ? "kubelet restarted: re-creating sockets" : "sockets wiped: re-creating",
            {{"dir", options.device_plugin_dir}});
      }
      kubelet_inode = kubelet_now;
      if (ours_wiped || SocketInode(Path(options.front_socket)) == 0 || SocketInode(Path(options.registrar_socket)) == 0) {
        registrar.Stop();
        StopFront();
        Status st = StartSockets();
        if (!st.ok()) Log(LogLevel::kError, "cannot re-create sockets", {{"error", st.error()}});
        if (local_backend) {
          local_backend->Stop();
          Status fs = StartLocalBackend();
          if (!fs.ok()) Log(LogLevel::kWarn, "fake backend: re-register failed", {{"error", fs.error()}});
        }
      }
      registered = false;
    }
    if (!registered && kubelet_now != 0 && backend.ever_listed()) {
      Status st = RegisterToKubelet();
      if (st.ok()) {
        registered = true;
        ++counters.kubelet_registrations;
        Log(LogLevel::kInfo, "registered to kubelet",
            {{"resource", options.resource_name}, {"endpoint", options.front_socket}});
      } else if (st.error() != last_register_error) {
        Log(LogLevel::kWarn, "cannot register to kubelet; retrying", {{"error", st.error()}});
      }
      last_register_error = st.ok() ? "" : st.error();
    }
  }

  NodeOptions options;
  PodCache pods;
  PodResourcesClient kubelet;
  BackendClient backend;
  FrontPlugin front;
  Registrar registrar;
  std::string pods_file;
  std::unique_ptr<LocalBackend> local_backend;
  std::unique_ptr<grpc::Server> front_server;
  ino_t kubelet_inode = 0, registrar_inode = 0, front_inode = 0;
  std::atomic<bool> registered{false};
  bool reconcile_failing = false;
  std::chrono::steady_clock::time_point next_backend_try{};
  std::string last_file_error, last_register_error;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::thread supervisor, reconciler;
  ActualPublisher* publisher = nullptr;
  std::map<std::string, std::string> published;  // uid -> gpu-actual published (time left out)
  std::set<std::string> mismatched;                // uids whose mismatch was reported
  std::map<std::string, uint64_t> last_asked;      // uid -> reconciles when FindEnded last asked Get
  std::string published_health;
  NodeCounters counters;
  std::atomic<int64_t> supervisor_beat{0}, reconciler_beat{0};  // steady_clock ticks.
  std::function<bool()> pods_synced;
};

NodeService::NodeService(NodeOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
NodeService::~NodeService() { Stop(); }

Status NodeService::Start() {
  Impl& s = *impl_;
  if (!s.pods_file.empty()) {
    Status st = s.pods.PollFile(s.pods_file);
    if (!st.ok()) return st;
  }
  Status st = s.StartSockets();
  if (!st.ok()) return st;
  if (s.local_backend) {
    st = s.StartLocalBackend();
    if (!st.ok()) return st;
  }
  if (!s.options.backend_socket.empty()) {
    st = s.backend.Connect(s.options.backend_socket, std::chrono::seconds(1));
    if (!st.ok()) Log(LogLevel::kWarn, "backend not reachable yet; retrying every second", {{"error", st.error()}});
  }
  s.supervisor = std::thread([&s] { s.Supervise(); });
  s.reconciler = std::thread([&s] { s.ReconcileLoop(); });
  return Status::Ok();
}

void NodeService::Stop() {
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    if (s.stopping) return;
    s.stopping = true;
    s.cv.notify_all();
  }
  if (s.supervisor.joinable()) s.supervisor.join();
  if (s.reconciler.joinable()) s.reconciler.join();
  s.StopFront();
  s.registrar.Stop();
  s.backend.Close();
  if (s.local_backend) s.local_backend->Stop();
}

void NodeService::SetPublisher(ActualPublisher* publisher) { impl_->publisher = publisher; }
void NodeService::SetPodSource(std::function<bool()> synced) { impl_->pods_synced = std::move(synced); }
void NodeService::SetPodsFile(std::string path) { impl_->pods_file = std::move(path); }
void NodeService::SetLocalBackend(std::unique_ptr<LocalBackend> backend) { impl_->local_backend = std::move(backend); }
uint64_t NodeService::mismatches() const { return impl_->counters.mismatches; }
uint64_t NodeService::reconciles() const { return impl_->counters.reconciles; }
PodCache& NodeService::pods() { return impl_->pods; }
FrontPlugin& NodeService::front() { return impl_->front; }
bool NodeService::registered() const { return impl_->registered; }
uint64_t NodeService::kubelet_registrations() const { return impl_->counters.kubelet_registrations; }
std::string NodeService::registrar_path() const { return impl_->Path(impl_->options.registrar_socket); }
std::string NodeService::front_path() const { return impl_->Path(impl_->options.front_socket); }

NodeServiceState NodeService::State() const {
  const Impl& s = *impl_;
  NodeServiceState st;
  st.kubelet_registered = s.registered;
  st.backend_connected = s.backend.connected();
  st.backend_listed = s.backend.ever_listed();
  st.reconcile_required = !s.options.pod_resources_socket.empty();
  st.pods_synced = !s.pods_synced || s.pods_synced();
  if (st.backend_listed) {
    for (const auto& d : s.backend.devices()) ++(d.health() == "Healthy" ? st.gpus_healthy : st.gpus_unhealthy);
  }
  const auto now = std::chrono::steady_clock::now().time_since_epoch();
  st.supervisor_idle = now - std::chrono::steady_clock::duration(s.supervisor_beat.load());
  st.reconciler_idle = now - std::chrono::steady_clock::duration(s.reconciler_beat.load());
  st.node = &s.counters;
  st.front = &s.front.counters();
  st.pod_resources = &s.kubelet.counters();
  return st;
}

}  // namespace topofit::node
