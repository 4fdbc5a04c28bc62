#include "bench/gpu_models.h"

#include <unistd.h>

#include <charconv>
#include <filesystem>

#include "base/files.h"
#include "base/strings.h"
#include "bench/openb_csv.h"
#include "topology/profiles.h"
#include "topology/topo_parser.h"

namespace topofit::bench {
Result<GpuModelMap> GpuModelMap::Parse(std::string_view text, std::string base_dir) {
  GpuModelMap map;
  map.base_dir_ = std::move(base_dir);
  int line_no = 0;
  for (std::string_view raw : SplitLines(text)) {
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty() || line.front() == '#') continue;
    // model,gpus,topology,why - `why` may itself hold commas.
    std::string_view f[3];
    for (int i = 0; i < 3; ++i) {
      size_t comma = line.find(',');
      if (comma == std::string_view::npos) {
        return Error{"line " + std::to_string(line_no) + ": expected model,gpus,topology,why"};
      }
      f[i] = Trim(line.substr(0, comma));
      line.remove_prefix(comma + 1);
    }
    GpuModelRule r;
    r.line = line_no;
    r.model = std::string(f[0]);
    r.topology = std::string(f[2]);
    r.why = std::string(Trim(line));
    if (f[1] != "*") {
      auto [end, ec] = std::from_chars(f[1].data(), f[1].data() + f[1].size(), r.gpus);
      if (ec != std::errc() || end != f[1].data() + f[1].size() || r.gpus < 1) {
        return Error{"line " + std::to_string(line_no) + ": gpus must be a positive integer or *, got '" +
                     std::string(f[1]) + "'"};
      }
    }
    if (r.model.empty() || r.topology.empty()) {
      return Error{"line " + std::to_string(line_no) + ": empty model or topology"};
    }
    map.rules_.push_back(std::move(r));
  }
  return map;
}

Result<GpuModelMap> GpuModelMap::Load(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ParseFile(path, [&](std::string_view text) { return Parse(text, dir); });
}

std::string GpuModelMap::DefaultPath() {
  // Installed layout first (the build copies the file next to the topofit executable), then the
  // source tree, so `topofit bench` works from a build directory and from an install alike.
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = exe.parent_path() / "gpu-models.csv";
    if (std::filesystem::exists(beside, ec)) return beside.string();
    auto share = exe.parent_path().parent_path() / "share" / "topofit" / "gpu-models.csv";
    if (std::filesystem::exists(share, ec)) return share.string();
  }
  return std::string(TOPOFIT_SOURCE_DIR) + "/bench/gpu-models.csv";
}

Result<std::string> GpuModelMap::TopologyFor(std::string_view model, int gpus) const {
  for (const auto& r : rules_) {
    if (r.model != "*" && r.model != model) continue;
    if (r.gpus != 0 && r.gpus != gpus) continue;
    std::string spec = r.topology;
    if (auto at = spec.find("{n}"); at != std::string::npos) spec.replace(at, 3, std::to_string(gpus));
    bool is_file = spec.find('/') != std::string::npos || spec.ends_with(".txt");
    if (is_file && !spec.starts_with("/") && !base_dir_.empty()) spec = base_dir_ + "/" + spec;
    return spec;
  }
  return Error{"no GPU model rule matches " + std::string(model) + " x" + std::to_string(gpus) +
               " (add a line model,gpus,topology,why to the GPU model map)"};
}

Result<std::shared_ptr<const Topology>> ResolveTopology(const std::string& spec, int gpus,
                                                        TopologyRegistry& registry) {
  bool is_file = spec.find('/') != std::string::npos || spec.ends_with(".txt");
  TopoMatrix matrix;
  if (is_file) {
    auto text = ReadFile(spec);
    if (!text) return Error{text.error()};
    auto parsed = ParseTopoMatrix(*text);
    if (!parsed) return Error{spec + ": " + parsed.error()};
    matrix = std::move(parsed).value();
  } else {
    auto m = ProfileMatrix(spec);
    if (!m) return Error{m.error()};
    matrix = std::move(m).value();
  }
  if (matrix.gpu_count() != gpus) {
    return Error{"topology " + spec + " has " + std::to_string(matrix.gpu_count()) + " GPUs, the node has " +
                 std::to_string(gpus)};
  }
  return registry.Intern(std::move(matrix));
}

}  // namespace topofit::bench
