#pragma once
// BackendClient: topofit's connection to the real device plugin (the NVIDIA plugin, or the fake
// backend), the one that registered to the Registrar.
//
// Connect() dials the socket, asks GetDevicePluginOptions (within `timeout`, asked again every 50 ms
// while it is UNAVAILABLE: a backend registering as it restarts) and starts a thread that
// reads ListAndWatch and keeps the latest device list (devices(), version() bumps on each list and
// on a connection change; WaitForChange() wakes the front plugin's relays). A broken stream is
// re-opened every 500 ms until Close() or the next Connect(); meanwhile connected() is false and
// the last list is kept. The calls are forwarded with the given deadline and return the backend's
// status unchanged. Thread-safe.

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "deviceplugin/v1beta1/api.grpc.pb.h"

namespace topofit::node {

class BackendClient {
 public:
  BackendClient() = default;
  ~BackendClient();

  Status Connect(const std::string& socket_path, std::chrono::milliseconds timeout = std::chrono::seconds(5));
  void Close();

  bool connected() const;
  bool ever_listed() const;  // A device list arrived since the last Connect.
  v1beta1::DevicePluginOptions options() const;
  std::vector<v1beta1::Device> devices() const;
  uint64_t version() const;
  // Blocks until version() != `seen`, or `timeout`; returns version().
  uint64_t WaitForChange(uint64_t seen, std::chrono::milliseconds timeout) const;
  // Bumps version(): every WaitForChange returns now (the front plugin's streams, to see a shutdown
  // at once rather than at their next timeout).
  void Wake();

  grpc::Status GetPreferredAllocation(const v1beta1::PreferredAllocationRequest& req,
                                      v1beta1::PreferredAllocationResponse* resp,
                                      std::chrono::system_clock::time_point deadline);
  grpc::Status Allocate(const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp,
                        std::chrono::system_clock::time_point deadline);
  grpc::Status PreStartContainer(const v1beta1::PreStartContainerRequest& req,
                                 v1beta1::PreStartContainerResponse* resp,
                                 std::chrono::system_clock::time_point deadline);

 private:
  void Watch(uint64_t generation);
  std::shared_ptr<v1beta1::DevicePlugin::Stub> stub() const;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::shared_ptr<v1beta1::DevicePlugin::Stub> stub_;
  std::string path_;
  v1beta1::DevicePluginOptions options_;
  std::vector<v1beta1::Device> devices_;
  uint64_t version_ = 0;
  uint64_t generation_ = 0;
  bool connected_ = false;
  bool listed_ = false;
  std::shared_ptr<grpc::ClientContext> watch_ctx_;
  std::thread watcher_;
};

}  // namespace topofit::node
