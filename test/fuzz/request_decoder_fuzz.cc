// libFuzzer target: the extender request decoders must return an Error, never crash, on any input;
// and ExtenderArgs decoded in place (a padded body, as HttpListener hands them over) must equal
// ExtenderArgs decoded from a copy.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "extender/k8s/object_decoder.h"
#include "extender/k8s/quantity.h"
#include "extender/k8s/snapshot.h"
#include "extender/protocol/extender_args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto copied = topofit::protocol::DecodeExtenderArgs(text);
  std::string padded(text);
  padded.append(topofit::protocol::kJsonPadding, '\0');
  topofit::protocol::ExtenderArgsOptions in_place;
  in_place.padded = true;
  auto parsed = topofit::protocol::DecodeExtenderArgs(std::string_view(padded.data(), size), in_place);
  if (copied.ok() != parsed.ok()) __builtin_trap();
  if (copied.ok()) {
    if (copied->node_names != parsed->node_names || copied->nodes.has_value() != parsed->nodes.has_value()) __builtin_trap();
    for (size_t i = 0; copied->nodes && i < copied->nodes->size(); ++i) {
      const auto &a = (*copied->nodes)[i], &b = (*parsed->nodes)[i];
      if (a.name != b.name || a.json != b.json) __builtin_trap();
    }
  }
  (void)topofit::protocol::DecodeBindingArgs(text);
  (void)topofit::protocol::DecodePreemptionArgs(text);
  (void)topofit::k8s::DecodePod(text);
  if (size < 64) (void)topofit::k8s::ParseQuantity(text);
  // YAML parsing is far slower; keep the inputs it sees small.
  if (size < 4096) (void)topofit::k8s::LoadSnapshot(text);
  return 0;
}
