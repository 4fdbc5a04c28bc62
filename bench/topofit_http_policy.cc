#include "bench/topofit_http_policy.h"

#include <httplib.h>

#include <cctype>
#include <nlohmann/json.hpp>
#include <random>

#include "bench/host_selection.h"
#include "bench/topofit_policy.h"
#include "extender/k8s/objects.h"

namespace topofit::bench {
namespace {

using nlohmann::json;

json PodJson(const PodSpec& pod) {
  json requests = {{"cpu", std::to_string(pod.cpu_milli) + "m"}, {"memory", std::to_string(pod.memory_mib) + "Mi"}};
  json limits = json::object();
  if (pod.gpus > 0) {
    requests[k8s::kGpuResource] = std::to_string(pod.gpus);
    limits[k8s::kGpuResource] = std::to_string(pod.gpus);
  }
  json spec = {{"schedulerName", "topofit-scheduler"},
               {"containers", json::array({{{"name", "main"}, {"resources", {{"requests", requests}, {"limits", limits}}}}})}};
  if (!pod.gpu_models.empty()) {  // gpu_spec as a required node affinity on the GPU model.
    spec["affinity"] = {{"nodeAffinity",
                         {{"requiredDuringSchedulingIgnoredDuringExecution",
                           {{"nodeSelectorTerms",
                             json::array({{{"matchExpressions",
                                            json::array({{{"key", k8s::kGfdProductLabel},
                                                          {"operator", "In"},
                                                          {"values", pod.gpu_models}}})}}})}}}}}};
  }
  json meta = {{"name", pod.name}, {"namespace", "bench"}, {"uid", pod.name}};
  if (pod.packed) meta["annotations"] = {{k8s::kReplicaPlacementAnnotation, "packed"}};
  return {{"metadata", meta},
          {"spec", spec},
          {"status", {{"phase", "Pending"}}}};
}

// Percent-encodes everything but RFC 3986 unreserved characters, for one URL path segment.
std::string PathSegment(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

class TopofitHttpPolicy final : public Policy {
 public:
  explicit TopofitHttpPolicy(const PolicyOptions& o) : weight_(o.extender_weight), most_(o.in_tree == "most") {
    std::string url = o.via_http;
    while (!url.empty() && url.back() == '/') url.pop_back();
    // Split "http://host:port/prefix" into the client's base and the path prefix.
    size_t scheme = url.find("://");
    size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
    base_ = slash == std::string::npos ? url : url.substr(0, slash);
    prefix_ = slash == std::string::npos ? "" : url.substr(slash);
    client_ = std::make_unique<httplib::Client>(base_);
    client_->set_keep_alive(true);
    // Small request after small reply on one connection: without this, Nagle's algorithm waits for the
    // server's delayed ACK (40 ms on Linux) and the measured decision time is mostly that wait.
    client_->set_tcp_nodelay(true);
    client_->set_connection_timeout(5);
    client_->set_read_timeout(5);
  }
  std::string name() const override { return most_ ? "topofit-mostallocated" : "topofit"; }

  // The served model cannot be emptied over HTTP (departures come from the watch), so a run needs a
  // server that holds nothing yet and knows exactly the bench's GPUs; anything else would replay the
  // pods onto a different cluster and report it as topofit's result.
  Status Reset(const SimCluster& cluster, uint64_t seed) override {
    rng_.seed(seed);
    names_.clear();
    for (const auto& n : cluster.nodes()) names_.push_back(n.spec->name);
    auto res = client_->Get("/api/v1/nodes");
    if (!res) return Error{"--via-http " + base_ + ": " + httplib::to_string(res.error())};
    auto j = json::parse(res->body, nullptr, false);
    if (res->status != 200 || j.is_discarded() || !j.contains("totals")) {
      return Error{"--via-http " + base_ + ": GET /api/v1/nodes answered HTTP " + std::to_string(res->status)};
    }
    const json& t = j["totals"];
    const int64_t usable = t.value("usableGpus", int64_t(-1)), free = t.value("freeGpus", int64_t(-1));
    if (usable != cluster.gpu_capacity()) {
      return Error{"--via-http: the server has " + std::to_string(usable) + " usable GPUs, the bench cluster " +
                   std::to_string(cluster.gpu_capacity()) +
                   ": start `topofit serve --snapshot` on the file `topofit bench ... --write-snapshot` writes"};
    }
    if (free != usable) {
      return Error{"--via-http: the server already holds " + std::to_string(usable - free) +
                   " GPUs: every run needs a freshly started `topofit serve` (one seed, one topofit policy)"};
    }
    return Status::Ok();
  }

  Placement Place(const SimCluster& cluster, const PodSpec& pod, std::span<const int> feasible) override {
    Placement p;
    if (pod.gpus <= 0) {
      p.node = Pick(cluster, pod, std::vector<int>(feasible.begin(), feasible.end()), {});
      return p;
    }
    json args = {{"Pod", PodJson(pod)}, {"Nodes", nullptr}, {"NodeNames", json::array()}};
    std::unordered_map<std::string, int> index;
    for (int i : feasible) {
      args["NodeNames"].push_back(names_[i]);
      index[names_[i]] = i;
    }
    auto filtered = Post("/filter", args);
    if (!filtered || !filtered->contains("NodeNames") || !(*filtered)["NodeNames"].is_array()) return p;
    std::vector<int> passed;
    json kept = json::array();
    for (const auto& n : (*filtered)["NodeNames"]) {
      auto it = index.find(n.get<std::string>());
      if (it != index.end()) {
        passed.push_back(it->second);
        kept.push_back(n);
      }
    }
    if (passed.empty()) return p;
    std::unordered_map<int, int> ext;
    if (passed.size() > 1) {  // kube-scheduler skips prioritize for a single node.
      args["NodeNames"] = kept;
      if (auto scores = Post("/prioritize", args); scores && scores->is_array()) {
        for (const auto& s : *scores) ext[index[s.value("Host", "")]] += s.value("Score", 0);
      }
    }
    int choice = Pick(cluster, pod, passed, ext);
    json bind = {{"PodName", pod.name}, {"PodNamespace", "bench"}, {"PodUID", pod.name}, {"Node", names_[choice]}};
    auto bound = Post("/bind", bind);
    if (!bound || !bound->value("Error", std::string()).empty()) return p;
    auto gpus = GrantedSet(pod);
    if (!gpus || gpus->size() != pod.gpus || !gpus->IsSubsetOf(cluster.node(choice).free)) return p;
    p.node = choice;
    p.gpus = *gpus;
    return p;
  }

 private:
  std::optional<json> Post(const std::string& verb, const json& body) {
    auto res = client_->Post(prefix_ + verb, body.dump(), "application/json");
    if (!res || res->status != 200) return std::nullopt;
    auto j = json::parse(res->body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }

  std::optional<GpuSet> GrantedSet(const PodSpec& pod) {
    // Bench pod names carry '#' (a pod drawn twice is two pods): escape it, or it starts a fragment.
    auto res = client_->Get("/api/v1/pods/bench/" + PathSegment(pod.name));
    if (!res || res->status != 200) return std::nullopt;
    auto j = json::parse(res->body, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    GpuSet s;
    if (j.contains("gpus") && j["gpus"].is_array()) {
      for (const auto& g : j["gpus"]) s.Add(g.get<int>());
      return s;
    }
    return std::nullopt;
  }

  int Pick(const SimCluster& cluster, const PodSpec& pod, const std::vector<int>& nodes,
           const std::unordered_map<int, int>& ext) {
    int k = SelectHost(nodes.size(), [&](size_t j) {
      auto it = ext.find(nodes[j]);
      return InTreeScore(cluster.node(nodes[j]), pod, most_) + (it == ext.end() ? 0 : ExtenderTotal(it->second, weight_));
    }, rng_);
    return k < 0 ? -1 : nodes[k];
  }

  int weight_;
  bool most_;
  std::string base_, prefix_;
  std::unique_ptr<httplib::Client> client_;
  std::mt19937_64 rng_;
  std::vector<std::string> names_;
};

}  // namespace

std::unique_ptr<Policy> MakeTopofitHttpPolicy(const PolicyOptions& options) {
  return std::make_unique<TopofitHttpPolicy>(options);
}

}  // namespace topofit::bench
