#include "extender/node/mig_listing.h"

#include <fmt/format.h>

#include <charconv>

#include "base/strings.h"

namespace topofit::node {
namespace {

// The text between "(UUID: " and ")" of a line; "" when absent.
std::string_view UuidOf(std::string_view line) {
  constexpr std::string_view kOpen = "(UUID: ";
  const size_t at = line.find(kOpen);
  if (at == std::string_view::npos) return {};
  const size_t from = at + kOpen.size();
  const size_t end = line.find(')', from);
  return end == std::string_view::npos ? std::string_view{} : Trim(line.substr(from, end - from));
}

// "GPU 3: ..." -> 3; -1 when the index is not a number.
int GpuIndexOf(std::string_view line) {
  line.remove_prefix(4);
  int index = -1;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
  if (ec != std::errc() || end == line.data() + line.size() || *end != ':') return -1;
  return index;
}

}  // namespace

Result<MigDevices> ParseMigListing(std::string_view listing, const std::vector<std::string>& gpu_uuids) {
  const int gpus = static_cast<int>(gpu_uuids.size());
  MigDevices out(gpus);
  std::vector<bool> seen(gpus, false);
  int current = -1, line_no = 0;
  for (std::string_view raw : SplitLines(listing)) {
    ++line_no;
    const std::string_view line = Trim(raw);
    const bool gpu = line.starts_with("GPU "), mig = line.starts_with("MIG ");
    if (!gpu && !mig) continue;
    const std::string_view uuid = UuidOf(line);
    if (uuid.empty()) return Error{fmt::format("nvidia-smi -L line {}: no (UUID: ...) in '{}'", line_no, line)};
    if (mig) {
      if (current < 0) return Error{fmt::format("nvidia-smi -L line {}: a MIG device before any GPU", line_no)};
      out[current].emplace_back(uuid);
      continue;
    }
    current = GpuIndexOf(line);
    if (current < 0 || current >= gpus || seen[current] || uuid != gpu_uuids[current]) {
      return Error{fmt::format("nvidia-smi -L line {}: '{}' is not GPU {} of --query-gpu (or repeats)", line_no,
                               line, current)};
    }
    seen[current] = true;
  }
  for (int g = 0; g < gpus; ++g)
    if (!seen[g]) return Error{fmt::format("nvidia-smi -L does not list GPU {}", g)};
  return out;
}

std::string EncodeMigUuids(const MigDevices& devices) {
  bool any = false;
  for (const auto& d : devices) any |= !d.empty();
  if (!any) return "";
  std::string out;
  for (size_t g = 0; g < devices.size(); ++g) {
    if (g) out += ';';
    for (size_t i = 0; i < devices[g].size(); ++i) out += (i ? "," : "") + devices[g][i];
  }
  return out;
}

}  // namespace topofit::node
