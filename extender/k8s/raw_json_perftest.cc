// raw_json_perftest: the full-node filter body's decoding, part by part - 1,000 Nodes as kubelet
// reports them (3.4 MB): simdjson's parse alone (the floor any decoder pays), the raw scan that
// finds each Node's bytes (json::RawArrayElements), and DecodeExtenderArgs as the filter verb runs it.
//   build/extender/k8s/raw_json_perftest --benchmark_repetitions=9 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <simdjson.h>

#include <string>

#include "extender/k8s/raw_json.h"
#include "extender/k8s/testing/busy_cluster.h"
#include "extender/protocol/extender_args.h"

namespace {

using namespace topofit;

const std::string& FullNodeBody() {
  static const std::string body = [] {
    std::string b = R"({"Pod":{"metadata":{"name":"p","namespace":"b","uid":"u"},"spec":{}},"Nodes":{"metadata":{},"items":[)";
    for (int i = 0; i < 1000; ++i) b += (i ? "," : "") + k8s::testing::RealisticNode(i);
    return b + R"(]},"NodeNames":null})";
  }();
  return body;
}

void BM_SimdjsonParse(benchmark::State& state) {
  const std::string& body = FullNodeBody();
  simdjson::padded_string padded(body);
  simdjson::dom::parser parser;
  for (auto _ : state) {
    simdjson::dom::element root;
    if (parser.parse(padded).get(root)) state.SkipWithError("parse failed");
    benchmark::DoNotOptimize(root);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_SimdjsonParse)->Unit(benchmark::kMicrosecond);

void BM_RawArrayElements(benchmark::State& state) {
  const std::string& body = FullNodeBody();
  for (auto _ : state) {
    auto items = k8s::json::RawArrayElements(body, {"Nodes", "items"}, /*keys_unique=*/true);
    if (!items || items->size() != 1000) state.SkipWithError("scan failed");
    benchmark::DoNotOptimize(items);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_RawArrayElements)->Unit(benchmark::kMicrosecond);

void BM_DecodeExtenderArgs(benchmark::State& state) {
  const std::string& body = FullNodeBody();
  for (auto _ : state) {
    auto args = protocol::DecodeExtenderArgs(body);
    if (!args.ok() || args->nodes->size() != 1000) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(args);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(body.size()));
}
BENCHMARK(BM_DecodeExtenderArgs)->Unit(benchmark::kMicrosecond);

}  // namespace
