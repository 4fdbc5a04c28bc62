#include "bench/shared_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

namespace topofit::bench {

DeviceKind KindOf(const cluster::SharedDevices& shared) {
  if (!shared.shared()) return DeviceKind::kWhole;
  return shared.mig() ? DeviceKind::kMig : DeviceKind::kReplica;
}

int ExtraReplicas(const cluster::SharedDevices& shared, GpuSet devices) {
  if (KindOf(shared) != DeviceKind::kReplica) return 0;
  return devices.size() - shared.GpusOf(devices).size();
}

WholeGpus CountWholeGpus(const SimCluster& cluster) {
  WholeGpus out;
  for (const SimNode& n : cluster.nodes()) {
    if (n.type < 0) continue;
    const cluster::SharedDevices& s = cluster.types()[n.type].shared;
    out.total += s.shared() ? s.GpusOf(n.all).size() : n.all.size();
    out.free += s.shared() ? s.WholeFree(n.all, n.free).size() : n.free.size();
  }
  return out;
}

bool HasSharedNodes(const SimCluster& cluster) {
  return std::any_of(cluster.types().begin(), cluster.types().end(),
                     [](const NodeType& t) { return t.shared.shared(); });
}

namespace {

// One policy's runs added up.
struct SharedRow {
  int runs = 0;
  int64_t doubled = 0;
  int64_t unpacked_on_replicas = 0;  // Multi-device pods on replica nodes that did not ask to be packed.
  double whole_free_pct = 0;
  std::array<double, 3> bandwidth{};  // By DeviceKind: summed ring GB/s ...
  std::array<int64_t, 3> pods{};      // ... over this many pods.
};

void AddRun(const RunMetrics& r, SharedRow& row) {
  ++row.runs;
  row.doubled += r.doubled_pods;
  row.whole_free_pct += r.whole_gpus_free_pct_at_100;
  for (const MultiGpuPlacement& m : r.multi) {
    if (m.kind == uint8_t(DeviceKind::kReplica) && !m.packed) ++row.unpacked_on_replicas;
    if (m.extra_replicas > 0) continue;  // Its ring would run over one GPU twice.
    row.bandwidth[m.kind] += m.bandwidth_gbps;
    ++row.pods[m.kind];
  }
}

std::string MeanCell(double sum, int64_t n) {
  return n > 0 ? fmt::format("{:.1f} ({})", sum / double(n), n) : "-";
}

}  // namespace

std::string FormatSharedTable(const std::vector<RunMetrics>& runs) {
  std::vector<std::string> order;
  std::map<std::string, SharedRow> rows;
  for (const RunMetrics& r : runs) {
    if (!r.shared_cluster || !r.error.empty()) continue;
    if (!rows.count(r.policy)) order.push_back(r.policy);
    AddRun(r, rows[r.policy]);
  }
  if (order.empty()) return "";
  std::string out =
      "shared GPUs: pods with two replicas of one GPU (not packed), unallocated whole GPUs, ring of multi-device pods\n";
  out += fmt::format("{:<28} {:>4} {:>14} {:>12} {:>13} {:>16} {:>16} {:>14}\n", "policy", "runs", "doubled/run",
                     "% unpacked", "whole free %", "whole GB/s (n)", "replica GB/s (n)", "MIG GB/s (n)");
  for (const std::string& p : order) {
    const SharedRow& r = rows[p];
    const double n = std::max(1, r.runs);
    const std::string pct = r.unpacked_on_replicas > 0
                                ? fmt::format("{:.1f}", 100.0 * double(r.doubled) / double(r.unpacked_on_replicas))
                                : "-";
    const std::string whole = r.whole_free_pct >= 0 ? fmt::format("{:.1f}", r.whole_free_pct / n) : "-";
    out += fmt::format("{:<28} {:>4} {:>14.1f} {:>12} {:>13} {:>16} {:>16} {:>14}\n", p, r.runs,
                       double(r.doubled) / n, pct, whole, MeanCell(r.bandwidth[0], r.pods[0]),
                       MeanCell(r.bandwidth[1], r.pods[1]), MeanCell(r.bandwidth[2], r.pods[2]));
  }
  out += "(GB/s: mean predicted ring bandwidth over the placed multi-device pods of all runs on nodes of that kind, "
         "doubled pods left out; n: those pods)\n";
  return out;
}

}  // namespace topofit::bench
