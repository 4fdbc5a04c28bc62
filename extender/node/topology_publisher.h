#pragma once
// TopologyPublisher: `topofit node`'s topology publishing (it was `topofit agent`): publishes one node's
// GPU topology to its Node object, again whenever it changes.
//
// RunOnce() is one pass: run `nvidia-smi topo -m` and `nvidia-smi --query-gpu=index,uuid,pci.bus_id
// --format=csv,noheader`, build the TopologyReport, read the node's annotations and patch them only
// when topofit.io/gpu-topology-hash differs. It also runs `nvidia-smi -L` for the MIG devices of each GPU
// (topofit.io/gpu-mig-uuids, mig_listing.h); its failure is a log line only (the map is left empty). Any failure is a log line and (once per distinct
// failure, not every interval) a Warning event on the Node - reason TopologyUnavailable when
// nvidia-smi cannot run or the node cannot be read or written, TopologyParseError when its output
// does not parse - and the annotations already on the node are left as they are: a good topology is
// never erased. Run() repeats RunOnce() every `interval` until Stop() (thread-safe, from a signal
// watcher or another thread). Not thread-safe otherwise.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include "base/log.h"
#include "extender/node/node_publisher.h"
#include "extender/node/topology_report.h"

namespace topofit::node {

inline constexpr const char* kReasonUnavailable = "TopologyUnavailable";
inline constexpr const char* kReasonParseError = "TopologyParseError";
inline constexpr const char* kReasonPublished = "TopologyPublished";

struct TopologyPublisherOptions {
  std::string node_name;
  std::string nvidia_smi = "nvidia-smi";
  std::chrono::milliseconds interval = std::chrono::minutes(5);
  std::chrono::milliseconds command_timeout = std::chrono::seconds(30);
};

enum class PassOutcome { kPublished, kUnchanged, kFailed };

class TopologyPublisher {
 public:
  // Where its lines go: topofit::Log in the binary, a capture in tests.
  using LogFn = std::function<void(LogLevel level, std::string_view msg, const LogFields& fields)>;
  TopologyPublisher(TopologyPublisherOptions options, NodePublisher& publisher, LogFn log = Log);

  PassOutcome RunOnce();
  void Run();
  void Stop();

 private:
  PassOutcome Fail(const std::string& reason, const std::string& message);
  // The MIG map from `nvidia-smi -L` into `report` (left empty, with a log line, when it fails).
  void AddMigDevices(TopologyReport& report);

  const TopologyPublisherOptions options_;
  NodePublisher& publisher_;
  LogFn log_;
  std::string last_event_;  // reason + message of the last Warning event sent, to not repeat it.
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace topofit::node
