#pragma once
// TopologyReport: what topofit node publishes about one node, built from nvidia-smi's two outputs.
//
// BuildTopologyReport validates `topo_text` (the output of `nvidia-smi topo -m`) with
// ParseTopoMatrix and `uuid_csv` (the output of `nvidia-smi --query-gpu=index,uuid,pci.bus_id
// --format=csv,noheader`), after removing the terminal escapes nvidia-smi puts around the matrix's
// header row even when writing to a pipe (the published text has none): one "index, uuid, bus id" line per GPU, indexes 0..n-1, n equal to the
// matrix's GPU count. The published index -> UUID -> PCI bus id map (topofit.io/gpu-uuids and
// topofit.io/gpu-pci-bus-ids, both in index order) is what the extender resolves per-container
// plans (topofit.io/gpu-plan, by UUID) with; a node without it gets index-only placements. Errors carry the parser's "line L, column C: ..." message. The hash is the
// SHA-256 (hex) of the published content, so an unchanged node is recognised from its annotations.

#include <map>
#include <string>
#include <string_view>

#include "base/status.h"

namespace topofit::node {

// Node annotations topofit node writes (kTopologyAnnotation is shared with the extender's reader).
inline constexpr const char* kTopologyAnnotation = "topofit.io/gpu-topology";
inline constexpr const char* kUuidsAnnotation = "topofit.io/gpu-uuids";
inline constexpr const char* kPciBusIdsAnnotation = "topofit.io/gpu-pci-bus-ids";
inline constexpr const char* kHashAnnotation = "topofit.io/gpu-topology-hash";

struct TopologyReport {
  std::string topology;  // The matrix text as nvidia-smi printed it (trailing blank lines trimmed).
  std::string uuids;     // "GPU-aaaa,GPU-bbbb,..." in index order.
  std::string pci_bus_ids;  // "00000000:07:00.0,..." in index order (as nvidia-smi prints them).
  std::string hash;      // 64 hex digits over topology, uuids and PCI bus ids (and mig_uuids when set).
  int gpu_count = 0;
  std::string mig_uuids;  // topofit.io/gpu-mig-uuids (mig_listing.h): "" when no GPU has MIG devices.

  // All of them; topofit.io/gpu-mig-uuids always (empty when none, so that a stale map is cleared).
  std::map<std::string, std::string> Annotations() const;
  // Sets mig_uuids and the hash over it.
  void SetMigUuids(std::string mig);
};

// Which input a failed BuildTopologyReport refused, so the publisher can name it in its event.
enum class ReportFailure { kNone, kTopology, kUuids };

Result<TopologyReport> BuildTopologyReport(std::string_view topo_text, std::string_view uuid_csv,
                                           ReportFailure* failure = nullptr);

// SHA-256 of `data` as 64 lower-case hex digits (OpenSSL EVP).
std::string Sha256Hex(std::string_view data);

}  // namespace topofit::node
