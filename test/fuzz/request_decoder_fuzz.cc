// libFuzzer target: the extender request decoders must return an Error, never crash, on any input.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "extender/k8s/extender_args.h"
#include "extender/k8s/object_decoder.h"
#include "extender/k8s/quantity.h"
#include "extender/k8s/snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)topofit::k8s::DecodeExtenderArgs(text);
  (void)topofit::k8s::DecodeBindingArgs(text);
  (void)topofit::k8s::DecodePreemptionArgs(text);
  (void)topofit::k8s::DecodePod(text);
  if (size < 64) (void)topofit::k8s::ParseQuantity(text);
  // YAML parsing is far slower; keep the inputs it sees small.
  if (size < 4096) (void)topofit::k8s::LoadSnapshot(text);
  return 0;
}
