#include "extender/node/topology_report.h"

#include <openssl/evp.h>

#include <fmt/format.h>

#include <cctype>
#include <vector>

#include "base/strings.h"
#include "extender/node/mig_listing.h"
#include "topology/topo_parser.h"
#include "topology/topo_text.h"

namespace topofit::node {
namespace {

struct GpuIds {
  std::vector<std::string> uuids, pci_bus_ids;  // In index order.
};

// "0, GPU-8f6e..., 00000000:07:00.0" lines -> UUIDs and PCI bus ids in index order.
Result<GpuIds> ParseUuidCsv(std::string_view csv, int gpu_count) {
  std::vector<std::string> uuids(gpu_count), pci(gpu_count);
  std::vector<bool> seen(gpu_count, false);
  int line_no = 0;
  int rows = 0;
  for (std::string_view raw : SplitLines(csv)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty()) continue;
    std::vector<std::string_view> fields = Split(line, ',');
    for (auto& f : fields) f = Trim(f);
    if (fields.size() != 3) {
      return Error{fmt::format("gpu query line {}: expected 'index, uuid, pci.bus_id', got '{}'", line_no, line)};
    }
    int index = -1;
    for (char c : fields[0]) {
      if (!std::isdigit(static_cast<unsigned char>(c))) { index = -1; break; }
      index = (index < 0 ? 0 : index * 10) + (c - '0');
      if (index > 4096) break;
    }
    if (index < 0 || index >= gpu_count || seen[index]) {
      return Error{fmt::format("gpu query line {}: index '{}' is not one of 0..{} (or repeats)", line_no,
                               fields[0], gpu_count - 1)};
    }
    if (fields[1].empty() || fields[1].find_first_of(" \t") != std::string_view::npos) {
      return Error{fmt::format("gpu query line {}: bad uuid '{}'", line_no, fields[1])};
    }
    if (fields[2].empty() || fields[2].find_first_of(" \t") != std::string_view::npos) {
      return Error{fmt::format("gpu query line {}: bad PCI bus id '{}'", line_no, fields[2])};
    }
    seen[index] = true;
    uuids[index] = std::string(fields[1]);
    pci[index] = std::string(fields[2]);
    ++rows;
  }
  if (rows != gpu_count) {
    return Error{fmt::format("gpu query lists {} GPUs but the topology matrix has {}", rows, gpu_count)};
  }
  return GpuIds{std::move(uuids), std::move(pci)};
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::map<std::string, std::string> TopologyReport::Annotations() const {
  return {{kTopologyAnnotation, topology}, {kUuidsAnnotation, uuids}, {kPciBusIdsAnnotation, pci_bus_ids},
          {kHashAnnotation, hash}, {kMigUuidsAnnotation, mig_uuids}};
}

namespace {
// A node without MIG devices hashes as before the MIG map existed: its annotations stay as they are.
std::string ReportHash(const TopologyReport& r) {
  std::string content = r.topology + "\n\x1e" + r.uuids + "\n\x1e" + r.pci_bus_ids;
  if (!r.mig_uuids.empty()) content += "\n\x1e" + r.mig_uuids;
  return Sha256Hex(content);
}
}  // namespace

void TopologyReport::SetMigUuids(std::string mig) {
  mig_uuids = std::move(mig);
  hash = ReportHash(*this);
}

Result<TopologyReport> BuildTopologyReport(std::string_view topo_text, std::string_view uuid_csv,
                                           ReportFailure* failure) {
  if (failure) *failure = ReportFailure::kNone;
  const std::string clean = StripTerminalEscapes(topo_text);
  topo_text = clean;
  auto matrix = ParseTopoMatrix(topo_text);
  if (!matrix.ok()) {
    if (failure) *failure = ReportFailure::kTopology;
    return Error{matrix.error()};
  }
  auto uuids = ParseUuidCsv(uuid_csv, matrix->gpu_count());
  if (!uuids.ok()) {
    if (failure) *failure = ReportFailure::kUuids;
    return Error{uuids.error()};
  }
  TopologyReport report;
  std::string_view text = topo_text;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  report.topology = std::string(text);
  for (size_t i = 0; i < uuids->uuids.size(); ++i) {
    if (i) report.uuids += ',', report.pci_bus_ids += ',';
    report.uuids += uuids->uuids[i];
    report.pci_bus_ids += uuids->pci_bus_ids[i];
  }
  report.gpu_count = matrix->gpu_count();
  report.hash = ReportHash(report);
  return report;
}

}  // namespace topofit::node
