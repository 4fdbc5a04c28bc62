#include "extender/node/plugin/podresources_client.h"

#include <algorithm>

#include <grpcpp/alarm.h>

#include "extender/node/plugin/grpc_util.h"
#include "podresources/v1/api.grpc.pb.h"

namespace topofit::node {

struct PodResourcesClient::Impl {
  std::unique_ptr<v1::PodResourcesLister::Stub> stub;
  std::string resource;
};

PodResourcesClient::PodResourcesClient(const std::string& socket_path, std::string resource)
    : impl_(std::make_unique<Impl>()) {
  impl_->resource = std::move(resource);
  if (!socket_path.empty()) impl_->stub = v1::PodResourcesLister::NewStub(UnixChannel(socket_path));
}

PodResourcesClient::~PodResourcesClient() = default;

namespace {

KubeletView ViewOf(const grpc::Status& st, const v1::GetPodResourcesResponse& resp, const ViewQuery& q,
                   const std::string& resource) {
  if (!st.ok()) {
    if (st.error_code() == grpc::StatusCode::NOT_FOUND || st.error_message().find("not found") != std::string::npos) {
      return KubeletView::kNotFound;
    }
    return KubeletView::kUnknown;
  }
  for (const auto& c : resp.pod_resources().containers()) {
    if (c.name() != q.container && !q.regular_init) continue;
    for (const auto& d : c.devices()) {
      if (d.resource_name() == resource && d.device_ids_size() > 0) return KubeletView::kHasDevices;
    }
  }
  return KubeletView::kAdmitting;
}

// One wave of Gets, one in flight per query, on a completion queue the calling thread drives. A Get's
// two tags (the reply, the pause's alarm) are the addresses of its `reader` and `alarm` members. Every
// call has the deadline, so every tag comes back.
class GetWave {
 public:
  using Clock = std::chrono::system_clock;  // gRPC deadlines are system_clock

  GetWave(v1::PodResourcesLister::Stub& stub, PodResourcesCounters& counters, const std::vector<ViewQuery>& queries,
          Clock::time_point deadline)
      : stub_(stub), counters_(counters), deadline_(deadline), calls_(queries.size()) {
    for (size_t i = 0; i < queries.size(); ++i) {
      calls_[i].req.set_pod_name(std::string(queries[i].name));
      calls_[i].req.set_pod_namespace(std::string(queries[i].namespace_));
      Start(calls_[i]);
    }
  }

  ~GetWave() {
    cq_.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  // Waits for every Get to end; out[i] is query i's view.
  void Finish(const std::vector<ViewQuery>& queries, const std::string& resource, std::vector<KubeletView>& out) {
    size_t open = calls_.size();
    void* tag = nullptr;
    bool ok = false;
    while (open > 0 && cq_.Next(&tag, &ok)) {
      size_t i = 0;
      while (tag != &calls_[i].reader && tag != &calls_[i].alarm) ++i;
      Call& c = calls_[i];
      if (tag == &c.alarm) {
        Start(c);
        continue;
      }
      // kubelet rate-limits the PodResources API (a token bucket, 100 per second, burst 10) and
      // answers RESOURCE_EXHAUSTED past it: that says nothing about the pod, so wait for a token and
      // ask again.
      if (c.status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
        ++counters_.get_rate_limited;
        if (Clock::now() + c.pause < deadline_) {
          c.alarm.Set(&cq_, Clock::now() + c.pause, &c.alarm);
          c.pause = std::min(c.pause * 2, std::chrono::milliseconds(40));
          continue;
        }
      } else {
        out[i] = ViewOf(c.status, c.resp, queries[i], resource);
      }
      --open;
    }
  }

 private:
  struct Call {
    v1::GetPodResourcesRequest req;
    v1::GetPodResourcesResponse resp;
    grpc::Status status;
    std::unique_ptr<grpc::ClientContext> ctx;
    std::unique_ptr<grpc::ClientAsyncResponseReader<v1::GetPodResourcesResponse>> reader;  // After ctx: destroyed first.
    grpc::Alarm alarm;
    std::chrono::milliseconds pause{5};
  };

  void Start(Call& c) {
    c.reader.reset();  // Lives in the call's arena, which the context owns: goes first.
    c.ctx = std::make_unique<grpc::ClientContext>();
    c.ctx->set_deadline(deadline_);
    c.resp.Clear();
    ++counters_.get;
    c.reader = stub_.AsyncGet(c.ctx.get(), c.req, &cq_);
    c.reader->Finish(&c.resp, &c.status, &c.reader);
  }

  v1::PodResourcesLister::Stub& stub_;
  PodResourcesCounters& counters_;
  const Clock::time_point deadline_;
  grpc::CompletionQueue cq_;  // Before calls_: shut down and drained (by ~GetWave) before they go.
  std::vector<Call> calls_;
};

}  // namespace

std::vector<KubeletView> PodResourcesClient::Views(const std::vector<ViewQuery>& queries,
                                                   std::chrono::milliseconds timeout) const {
  std::vector<KubeletView> out(queries.size(), KubeletView::kUnknown);
  if (!impl_->stub || queries.empty()) return out;
  GetWave wave(*impl_->stub, counters_, queries, GetWave::Clock::now() + timeout);
  wave.Finish(queries, impl_->resource, out);
  return out;
}

Result<std::vector<PodDevices>> PodResourcesClient::List(std::chrono::milliseconds timeout) const {
  if (!impl_->stub) return Error{"no PodResources socket"};
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout));
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse resp;
  ++counters_.list;
  grpc::Status st = impl_->stub->List(&ctx, req, &resp);
  if (!st.ok()) return Error{"PodResources List: " + st.error_message()};
  std::vector<PodDevices> out;
  for (const auto& p : resp.pod_resources()) {
    PodDevices pd{p.namespace_(), p.name(), {}};
    for (const auto& c : p.containers()) {
      DeviceList ids;
      for (const auto& d : c.devices()) {
        if (d.resource_name() == impl_->resource) ids.insert(ids.end(), d.device_ids().begin(), d.device_ids().end());
      }
      if (!ids.empty()) pd.containers.emplace_back(c.name(), std::move(ids));
    }
    out.push_back(std::move(pd));
  }
  return out;
}

Result<DeviceList> PodResourcesClient::Allocatable(std::chrono::milliseconds timeout) const {
  if (!impl_->stub) return Error{"no PodResources socket"};
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout));
  v1::AllocatableResourcesRequest req;
  v1::AllocatableResourcesResponse resp;
  grpc::Status st = impl_->stub->GetAllocatableResources(&ctx, req, &resp);
  if (!st.ok()) return Error{"PodResources GetAllocatableResources: " + st.error_message()};
  DeviceList out;
  for (const auto& d : resp.devices()) {
    if (d.resource_name() == impl_->resource) out.insert(out.end(), d.device_ids().begin(), d.device_ids().end());
  }
  return out;
}

}  // namespace topofit::node
