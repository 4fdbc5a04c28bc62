#include "extender/node/plugin/podresources_client.h"

#include <algorithm>
#include <thread>

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

KubeletView PodResourcesClient::View(const std::string& namespace_, const std::string& name,
                                     const std::string& container, std::chrono::milliseconds timeout,
                                     bool regular_init) const {
  if (!impl_->stub) return KubeletView::kUnknown;
  const auto deadline = std::chrono::system_clock::now() + timeout;  // gRPC deadlines are system_clock
  v1::GetPodResourcesRequest req;
  req.set_pod_name(name);
  req.set_pod_namespace(namespace_);
  v1::GetPodResourcesResponse resp;
  grpc::Status st;
  // kubelet rate-limits the PodResources API (a token bucket, 100 per second, burst 10) and answers
  // RESOURCE_EXHAUSTED past it: that says nothing about the pod, so wait for a token and ask again.
  for (auto pause = std::chrono::milliseconds(5);; pause = std::min(pause * 2, std::chrono::milliseconds(40))) {
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline);
    resp.Clear();
    st = impl_->stub->Get(&ctx, req, &resp);
    if (st.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) break;
    if (std::chrono::system_clock::now() + pause >= deadline) return KubeletView::kUnknown;
    std::this_thread::sleep_for(pause);
  }
  if (!st.ok()) {
    if (st.error_code() == grpc::StatusCode::NOT_FOUND || st.error_message().find("not found") != std::string::npos) {
      return KubeletView::kNotFound;
    }
    return KubeletView::kUnknown;
  }
  for (const auto& c : resp.pod_resources().containers()) {
    if (c.name() != container && !regular_init) continue;
    for (const auto& d : c.devices()) {
      if (d.resource_name() == impl_->resource && d.device_ids_size() > 0) return KubeletView::kHasDevices;
    }
  }
  return KubeletView::kAdmitting;
}

Result<std::vector<PodDevices>> PodResourcesClient::List(std::chrono::milliseconds timeout) const {
  if (!impl_->stub) return Error{"no PodResources socket"};
  grpc::ClientContext ctx;
  ctx.set_deadline(After(timeout));
  v1::ListPodResourcesRequest req;
  v1::ListPodResourcesResponse resp;
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
