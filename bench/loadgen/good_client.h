#pragma once
// GoodClient: kube-scheduler's side of hostile_load - one pod's filter with every node's name
// (node-cache mode) and then its prioritize with the names filter kept, over one keep-alive
// connection (a new one when the server has closed it, as Go's transport does). Cycle() times both
// and says what went wrong, if anything: a transport failure, a status other than 200, an Error in
// the reply, a filter that kept no node. One call at a time: not thread-safe.

#include <fmt/format.h>
#include <simdjson.h>

#include <chrono>
#include <string>

#include "bench/loadgen/raw_http_client.h"
#include "bench/loadgen/scale_cluster.h"

namespace topofit::bench {

class GoodClient {
 public:
  GoodClient(int port, int nodes) : c_("127.0.0.1", port) {
    c_.set_drop_closed_idle(true);
    names_ = "[";
    for (int i = 0; i < nodes; ++i) names_ += (i ? ",\"" : "\"") + k8s::testing::Ec2NodeName(i) + "\"";
    names_ += "]";
  }

  // Pod `k`'s filter and prioritize (1, 2, 4 or 8 GPUs in turn); "" or what went wrong.
  std::string Cycle(long k, double* filter_ms, double* prioritize_ms) {
    std::string pod = fmt::format(
        R"({{"metadata":{{"name":"good-{0}","namespace":"ml","uid":"uid-good-{0}"}},"spec":{{"schedulerName":"topofit",)"
        R"("containers":[{{"name":"c","resources":{{"limits":{{"nvidia.com/gpu":"{1}"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
        k, 1 << (k % 4));
    if (std::string e = Timed("/scheduler/filter", R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + names_ + "}", filter_ms); !e.empty())
      return "filter: " + e;
    simdjson::dom::element reply;
    simdjson::dom::array kept;
    if (parser_.parse(c_.last_body().data(), c_.last_body().size(), true).get(reply) != simdjson::SUCCESS ||
        reply["NodeNames"].get(kept) != simdjson::SUCCESS || kept.size() == 0)
      return "filter: kept no node";
    std::string names = "[";
    for (simdjson::dom::element n : kept) names += (names.size() > 1 ? ",\"" : "\"") + std::string(n.get_string().value_unsafe()) + "\"";
    names += "]";
    if (std::string e = Timed("/scheduler/prioritize", R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + names + "}", prioritize_ms); !e.empty())
      return "prioritize: " + e;
    return "";
  }

 private:
  std::string Timed(const std::string& path, const std::string& body, double* ms) {
    auto t0 = std::chrono::steady_clock::now();
    int status = c_.Post(path, body);
    *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (status != 200) return fmt::format("HTTP status {}", status);
    std::string_view reply = c_.last_body();
    if (reply.find(R"("Error":")") != std::string_view::npos && reply.find(R"("Error":"")") == std::string_view::npos)
      return "an Error in the reply: " + std::string(reply.substr(0, 300));
    return "";
  }

  RawHttpClient c_;
  std::string names_;
  simdjson::dom::parser parser_;
};

}  // namespace topofit::bench
