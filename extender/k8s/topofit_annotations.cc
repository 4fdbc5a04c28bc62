#include "extender/k8s/topofit_annotations.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/strings.h"

namespace topofit::k8s {

namespace {

const std::string* Find(const ObjectMeta& meta, const char* key) {
  auto it = meta.annotations.find(key);
  return it == meta.annotations.end() ? nullptr : &it->second;
}

template <class T, class Parse>
Decoded<T> DecodeWith(const ObjectMeta& meta, const char* key, Parse parse) {
  Decoded<T> out;
  const std::string* text = Find(meta, key);
  if (!text) return out;
  auto parsed = parse(*text);
  if (parsed.ok()) {
    out.value = std::move(*parsed);
  } else {
    out.error = parsed.error();
  }
  return out;
}

std::optional<std::vector<std::string>> TrimmedList(const ObjectMeta& meta, const char* key) {
  const std::string* text = Find(meta, key);
  if (!text) return std::nullopt;
  std::vector<std::string> out;
  for (std::string_view item : Split(*text, ',')) out.emplace_back(Trim(item));
  return out;
}

}  // namespace

Result<std::vector<int>> ParseGpuIds(std::string_view text) {
  std::vector<int> out;
  if (text.find_first_not_of(" \t") == std::string_view::npos) return Error{"is empty"};
  for (std::string_view item : Split(text, ',')) {
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    int v = -1;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || v < 0 || v > kMaxGpuIndex ||
        std::find(out.begin(), out.end(), v) != out.end()) {
      return Error{fmt::format("'{}' is not a GPU list like 0,1,2,3", text)};
    }
    out.push_back(v);
  }
  return out;
}

PodGpuAnnotations DecodePodGpuAnnotations(const PodObject& pod) {
  PodGpuAnnotations a;
  a.gpu_ids = DecodeWith<std::vector<int>>(pod.meta, kGpuIdsAnnotation, ParseGpuIds);
  a.plan = DecodeWith<GpuAssignment>(pod.meta, kGpuPlanAnnotation, ParseGpuAssignment);
  a.actual = DecodeWith<GpuAssignment>(pod.meta, kGpuActualAnnotation, ParseGpuAssignment);
  return a;
}

NodeGpuAnnotations DecodeNodeGpuAnnotations(const NodeObject& node) {
  NodeGpuAnnotations a;
  if (const std::string* t = Find(node.meta, kTopologyAnnotation)) a.topology = *t;
  a.uuids = TrimmedList(node.meta, kGpuUuidsAnnotation);
  a.pci_bus_ids = TrimmedList(node.meta, kGpuPciAnnotation);
  if (const std::string* m = Find(node.meta, kGpuMigUuidsAnnotation)) a.mig_uuids = *m;
  a.health = DecodeWith<GpuHealthReport>(node.meta, kGpuHealthAnnotation, ParseGpuHealth);
  return a;
}

}  // namespace topofit::k8s
