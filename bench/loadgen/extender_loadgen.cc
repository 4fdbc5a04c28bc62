// extender_loadgen: client-side latency of the extender verbs over loopback with keep-alive, next to
// a do-nothing cpp-httplib server that parses the names with simdjson and echoes them (the floor).
//
//   build/bench/extender_loadgen [--iterations N] [--only TEXT] [--in-process] [--nodes N]
//
// Scenarios: node-cache mode with 5,000 nodes (--nodes) (filter and prioritize), on an idle cluster (every
// node passes, so filter sends 5,000 names back; nodes come in three states) and on a busy one (a
// pod with random GPUs, CPU and memory on 7 of 8 nodes: nearly every node in a state of its own);
// full-node mode with 1,000 realistic Node objects (filter); prioritize-pods-without-gpus (the verb of
// the second extender entry, which kube-scheduler calls for every pod) with a pod asking for no GPU
// (8 cores, 32 GiB: scored) and with a 2-GPU pod (answered [] unscored), on the idle and the busy
// cluster, with a workload estimate full (48 shapes of 1-8 GPUs with their CPU and memory, as the
// openb pod lists fill it): FragmentationGradient's cost grows with the shapes.
// Each scenario alternates requests to a do-nothing floor server (parse with simdjson, echo the
// names or Nodes) on cpp-httplib, the same floor on topofit's transport (floor'), and topofit, so
// all see the same machine noise. Prints median, p90 and p99 in milliseconds, and topofit's ratio to
// both floors. --in-process calls both handlers directly instead
// (no HTTP): what each costs the server's CPU.
#include <fmt/format.h>
#include <httplib.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/loadgen/raw_http_client.h"
#include "extender/k8s/object_decoder.h"
#include "extender/k8s/testing/busy_cluster.h"
#include "base/json_writer.h"
#include "extender/server/serve_app.h"
#include "extender/server/http_listener.h"

namespace {

using namespace topofit;

std::string PodJson(int gpus) {
  return fmt::format(R"({{"metadata":{{"name":"bench","namespace":"b","uid":"bench-uid"}},"spec":{{"containers":[{{"name":"c","resources":{{"limits":{{"nvidia.com/gpu":"{}"}}}}}}]}},"status":{{}}}})", gpus);
}

// A pod asking for no GPU, with CPU and memory (what the second extender entry scores).
std::string CpuPodJson() {
  return R"({"metadata":{"name":"cpu","namespace":"b","uid":"cpu-uid"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"8","memory":"32Gi"}}}]},"status":{}})";
}

// Fills the workload estimate as a long-running cluster's is: 2,000 GPU pods of 1/2/4/8 GPUs
// (60/15/10/15%) with 2-12 cores and 8-96 GiB per GPU, seeded, which leaves the 48 shapes kept.
void SeedWorkload(placement::Pipeline& pipeline) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    cluster::PodRequest pod;
    pod.uid = fmt::format("seen-{}", i);
    const uint32_t r = rng() % 100;
    pod.gpus = r < 60 ? 1 : r < 75 ? 2 : r < 85 ? 4 : 8;
    pod.cpu_milli = int64_t(2 + rng() % 11) * 1000 * pod.gpus;
    pod.memory_bytes = (int64_t(8 + rng() % 89) << 30) * pod.gpus;
    pipeline.workload().Observe(pod);
  }
}

struct Stats {
  double median, p90, p99;
};

Stats Summarise(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto at = [&](double q) { return ms[std::min(ms.size() - 1, size_t(q * ms.size()))]; };
  return {at(0.5), at(0.9), at(0.99)};
}

double TimedPost(bench::RawHttpClient& c, const std::string& path, const std::string& body) {
  auto start = std::chrono::steady_clock::now();
  int status = c.Post(path, body);
  double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (status != 200) {
    std::fprintf(stderr, "request to %s failed (status %d)\n", path.c_str(), status);
    std::exit(1);
  }
  return t;
}

struct Target {
  bench::RawHttpClient* client;
  std::string path;
};

// Requests to the targets alternate, so all see the same machine noise.
std::vector<Stats> MeasureAlternating(const std::vector<Target>& targets, const std::string& body, int iterations) {
  for (int i = 0; i < iterations / 10 + 5; ++i)  // Warm-up.
    for (const Target& t : targets) TimedPost(*t.client, t.path, body);
  std::vector<std::vector<double>> ms(targets.size());
  for (int i = 0; i < iterations; ++i)
    for (size_t k = 0; k < targets.size(); ++k) ms[k].push_back(TimedPost(*targets[k].client, targets[k].path, body));
  std::vector<Stats> out;
  for (auto& m : ms) out.push_back(Summarise(std::move(m)));
  return out;
}

// The floor: parse the names with simdjson, echo them in the verb's reply shape. Plain functions, so
// --in-process can time them without HTTP.
std::vector<std::string_view> FloorNames(std::string_view body) {
  thread_local simdjson::dom::parser p;
  simdjson::padded_string padded(body);
  simdjson::dom::element root = p.parse(padded);
  std::vector<std::string_view> names;
  for (std::string_view n : root["NodeNames"].get_array()) names.push_back(n);
  return names;  // Views into the parser's string buffer, valid until its next parse.
}

std::string FloorFilter(std::string_view body) {
  std::vector<std::string_view> names = FloorNames(body);
  std::string out = R"({"Nodes":null,"NodeNames":[)";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    AppendJsonString(out, names[i]);
  }
  out += R"(],"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";
  return out;
}

std::string FloorPrioritize(std::string_view body) {
  std::vector<std::string_view> names = FloorNames(body);
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += ',';
    out += R"({"Host":)";
    AppendJsonString(out, names[i]);
    out += R"(,"Score":0})";
  }
  out += ']';
  return out;
}

// Full-node floor: parse the body, echo its Nodes list as sent (located by a plain text search).
std::string FloorFilterFull(std::string_view body) {
  thread_local simdjson::dom::parser p;
  simdjson::padded_string padded(body);
  simdjson::dom::element root = p.parse(padded);
  if (root["Nodes"].error()) return "";
  size_t from = body.find(R"("Nodes":)") + 8, to = body.rfind(R"(,"NodeNames")");
  std::string out = R"({"Nodes":)";
  out.append(body, from, to - from);
  out += R"(,"NodeNames":null,"FailedNodes":{},"FailedAndUnresolvableNodes":{},"Error":""})";
  return out;
}

std::string (*FloorFor(std::string_view path))(std::string_view) {
  if (path == "/floor/filter") return FloorFilter;
  if (path == "/floor/prioritize") return FloorPrioritize;
  if (path == "/floor/filter-full") return FloorFilterFull;
  return nullptr;
}

void FloorRoutes(httplib::Server& s) {
  auto route = [&s](const char* path, std::string (*floor)(std::string_view)) {
    s.Post(path, [floor](const httplib::Request& req, httplib::Response& res) {
      res.set_content(floor(req.body), "application/json");
    });
  };
  for (const char* path : {"/floor/filter", "/floor/prioritize", "/floor/filter-full"}) route(path, FloorFor(path));
}

// The same floor handlers behind topofit's own transport (HttpListener): what is left of
// topofit's cost over the floor on equal transports is its handlers' work.
server::Reply FloorOnListener(const server::HttpRequest& req) {
  server::Reply r;
  auto floor = FloorFor(req.path);
  if (!floor) r.status = 404;
  else r.body = floor(req.body);
  return r;
}

// --in-process: the same two handlers called directly, alternating - the server's CPU time per
// request without HTTP, to tell what topofit's own work costs from what the transport costs.
std::pair<Stats, Stats> MeasureInProcess(std::string (*floor)(std::string_view), server::ExtenderVerbs& verbs,
                                         server::Verb verb, const std::string& body, int iterations) {
  auto time = [](auto&& f) {
    auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<double> f, e;
  for (int i = 0; i < iterations / 10 + 5 + iterations; ++i) {
    double tf = time([&] { floor(body); });
    double te = time([&] { verbs.Handle(verb, body); });
    if (i < iterations / 10 + 5) continue;  // Warm-up.
    f.push_back(tf);
    e.push_back(te);
  }
  return {Summarise(std::move(f)), Summarise(std::move(e))};
}

void Print(const char* what, Stats s) {
  std::printf("%-50s median %7.3f ms   p90 %7.3f ms   p99 %7.3f ms\n", what, s.median, s.p90, s.p99);
}

struct Args {
  int iterations = 2000;
  std::string only;  // Runs only the scenarios whose label contains this text (for profiling).
  bool in_process = false;
  int nodes = 5000;  // Of the node-cache scenarios' clusters.
};

Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--in-process") == 0) a.in_process = true;
    if (i + 1 == argc) break;
    if (std::strcmp(argv[i], "--iterations") == 0) a.iterations = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--only") == 0) a.only = argv[i + 1];
    if (std::strcmp(argv[i], "--nodes") == 0) a.nodes = std::max(1, std::atoi(argv[i + 1]));
  }
  return a;
}

// "5,000": the cluster's size as the scenario names say it.
std::string CountLabel(int n) {
  std::string label = std::to_string(n);
  for (int at = int(label.size()) - 3; at > 0; at -= 3) label.insert(size_t(at), ",");
  return label;
}

// The four extenders, each on its own port: the idle cluster and the same cluster made busy, and both
// again with their workload estimates full (for prioritize-pods-without-gpus).
struct Extenders {
  std::unique_ptr<server::ServeApp> idle, busy, idle_w, busy_w;
  std::vector<server::ServeApp*> all() const { return {idle.get(), busy.get(), idle_w.get(), busy_w.get()}; }
};

Result<Extenders> StartExtenders(int nodes) {
  server::ServeConfig cfg;
  cfg.server.host = "127.0.0.1";
  cfg.server.port = 0;
  k8s::Snapshot snap;
  for (int i = 0; i < nodes; ++i) {
    auto node = k8s::DecodeNode(k8s::testing::RealisticNode(i));
    if (!node) return Error{node.error()};
    snap.nodes.push_back(std::move(*node));
  }
  auto create = [&cfg] { return server::ServeApp::Create(cfg, "", nullptr, /*log_decisions=*/false); };
  auto idle = create(), busy = create();
  if (!idle || !busy) return Error{"cannot create the extenders"};
  (*idle)->Load(snap);
  std::vector<std::string> names_of;
  for (const auto& n : snap.nodes) names_of.push_back(n.meta.name);
  snap.pods = k8s::testing::BusyPods(names_of);
  (*busy)->Load(snap);
  auto idle_w = create(), busy_w = create();
  if (!idle_w || !busy_w) return Error{"cannot create the extenders"};
  (*busy_w)->Load(snap);
  snap.pods.clear();
  (*idle_w)->Load(snap);
  Extenders e{std::move(*idle), std::move(*busy), std::move(*idle_w), std::move(*busy_w)};
  for (auto* a : {e.idle_w.get(), e.busy_w.get()}) SeedWorkload(a->pipeline());
  for (auto* a : e.all())
    if (auto s = a->server().Start(); !s.ok()) return Error{s.error()};
  return e;
}

// The floor on cpp-httplib and on topofit's transport, each on its own thread until Stop().
class Floors {
 public:
  Floors() : listener_(ListenerOptions(), FloorOnListener) {
    httplib_.set_tcp_nodelay(true);
    httplib_.set_keep_alive_max_count(std::numeric_limits<size_t>::max());
    FloorRoutes(httplib_);
    httplib_port_ = httplib_.bind_to_any_port("127.0.0.1");
    httplib_thread_ = std::thread([this] { httplib_.listen_after_bind(); });
    while (!httplib_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Status Start() {
    if (auto s = listener_.Bind(); !s.ok()) return s;
    listener_thread_ = std::thread([this] { listener_.Run(); });
    return Status::Ok();
  }
  ~Floors() { Stop(); }
  // Idempotent.
  void Stop() {
    httplib_.stop();
    if (httplib_thread_.joinable()) httplib_thread_.join();
    listener_.Stop();
    if (listener_thread_.joinable()) listener_thread_.join();
  }
  int httplib_port() const { return httplib_port_; }
  int listener_port() const { return listener_.port(); }

 private:
  static server::ListenerOptions ListenerOptions() {
    server::ListenerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.threads = 4;
    return o;
  }

  httplib::Server httplib_;
  int httplib_port_ = 0;
  std::thread httplib_thread_;
  server::HttpListener listener_;
  std::thread listener_thread_;
};

// The request bodies: node-cache mode with every node's name (a 2-GPU pod, and a pod without GPUs),
// and full-node mode with 1,000 Node objects.
struct Bodies {
  std::string cache, cpu, full;
};

Bodies MakeBodies(int nodes) {
  std::string names = "[";
  for (int i = 0; i < nodes; ++i) names += (i ? ",\"" : "\"") + k8s::testing::Ec2NodeName(i) + "\"";
  names += "]";
  Bodies b;
  b.cache = R"({"Pod":)" + PodJson(2) + R"(,"Nodes":null,"NodeNames":)" + names + "}";
  b.cpu = R"({"Pod":)" + CpuPodJson() + R"(,"Nodes":null,"NodeNames":)" + names + "}";
  b.full = R"({"Pod":)" + PodJson(2) + R"(,"Nodes":{"metadata":{},"items":[)";
  for (int i = 0; i < 1000; ++i) b.full += (i ? "," : "") + k8s::testing::RealisticNode(i);
  b.full += R"(]},"NodeNames":null})";
  return b;
}

struct Scenario {
  std::string name;
  const char* floor_path;
  std::string (*floor)(std::string_view);
  const char* path;
  server::Verb verb;
  const std::string* body;
  int iterations;
  server::ServeApp* app;
};

std::vector<Scenario> Scenarios(const Extenders& e, const Bodies& b, int nodes, int iterations) {
  const std::string n = CountLabel(nodes);
  const int full_iterations = std::max(50, iterations / 10);
  const char* kWithoutGpus = "/scheduler/prioritize-pods-without-gpus";
  using server::Verb;
  return {
      {fmt::format("filter     (node-cache, {} nodes)", n), "/floor/filter", FloorFilter, "/scheduler/filter",
       Verb::kFilter, &b.cache, iterations, e.idle.get()},
      {fmt::format("prioritize (node-cache, {} nodes)", n), "/floor/prioritize", FloorPrioritize,
       "/scheduler/prioritize", Verb::kPrioritize, &b.cache, iterations, e.idle.get()},
      {fmt::format("filter     (node-cache, {} busy)", n), "/floor/filter", FloorFilter, "/scheduler/filter",
       Verb::kFilter, &b.cache, iterations, e.busy.get()},
      {fmt::format("prioritize (node-cache, {} busy)", n), "/floor/prioritize", FloorPrioritize,
       "/scheduler/prioritize", Verb::kPrioritize, &b.cache, iterations, e.busy.get()},
      {"filter     (full-node, 1,000 Nodes)", "/floor/filter-full", FloorFilterFull, "/scheduler/filter",
       Verb::kFilter, &b.full, full_iterations, e.idle.get()},
      {fmt::format("no-GPU prioritize, CPU pod ({} idle)", n), "/floor/prioritize", FloorPrioritize, kWithoutGpus,
       Verb::kPrioritizePodsWithoutGpus, &b.cpu, iterations, e.idle_w.get()},
      {fmt::format("no-GPU prioritize, CPU pod ({} busy)", n), "/floor/prioritize", FloorPrioritize, kWithoutGpus,
       Verb::kPrioritizePodsWithoutGpus, &b.cpu, iterations, e.busy_w.get()},
      {fmt::format("no-GPU prioritize, GPU pod ({} busy)", n), "/floor/prioritize", FloorPrioritize, kWithoutGpus,
       Verb::kPrioritizePodsWithoutGpus, &b.cache, iterations, e.busy_w.get()},
  };
}

void RunInProcess(const Scenario& sc) {
  auto [f, t] = MeasureInProcess(sc.floor, sc.app->verbs(), sc.verb, *sc.body, sc.iterations);
  Print(("floor   " + sc.name).c_str(), f);
  Print(("topofit " + sc.name).c_str(), t);
  std::printf("%-50s median %7.2fx    p99 %7.2fx\n", "  topofit / floor", t.median / f.median, t.p99 / f.p99);
}

void RunOverHttp(const Scenario& sc, bench::RawHttpClient& floor, bench::RawHttpClient& floor_listener,
                 bench::RawHttpClient& extender) {
  std::vector<Stats> s = MeasureAlternating(
      {{&floor, sc.floor_path}, {&floor_listener, sc.floor_path}, {&extender, sc.path}}, *sc.body, sc.iterations);
  Print(("floor   " + sc.name).c_str(), s[0]);
  Print(("floor'  " + sc.name).c_str(), s[1]);
  Print(("topofit " + sc.name).c_str(), s[2]);
  std::printf("%-50s median %7.2fx    p99 %7.2fx\n", "  topofit / floor", s[2].median / s[0].median, s[2].p99 / s[0].p99);
  std::printf("%-50s median %7.2fx    p99 %7.2fx\n", "  topofit / floor'", s[2].median / s[1].median, s[2].p99 / s[1].p99);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = ParseArgs(argc, argv);
  auto extenders = StartExtenders(args.nodes);
  if (!extenders) return std::fprintf(stderr, "%s\n", extenders.error().c_str()), 1;
  Floors floors;
  if (auto s = floors.Start(); !s.ok()) return std::fprintf(stderr, "%s\n", s.error().c_str()), 1;
  const Bodies bodies = MakeBodies(args.nodes);

  // One keep-alive client per server.
  std::map<server::ServeApp*, std::unique_ptr<bench::RawHttpClient>> clients;
  for (auto* a : extenders->all()) clients[a] = std::make_unique<bench::RawHttpClient>("127.0.0.1", a->server().port());
  bench::RawHttpClient flo("127.0.0.1", floors.httplib_port());
  bench::RawHttpClient flo_listener("127.0.0.1", floors.listener_port());
  std::printf("extender_loadgen: %d requests per scenario, keep-alive, loopback; filter body %zu KB, full-node body %zu KB\n",
              args.iterations, bodies.cache.size() / 1024, bodies.full.size() / 1024);
  for (const Scenario& sc : Scenarios(*extenders, bodies, args.nodes, args.iterations)) {
    if (!args.only.empty() && sc.name.find(args.only) == std::string::npos) continue;
    if (args.in_process) RunInProcess(sc);
    else RunOverHttp(sc, flo, flo_listener, *clients[sc.app]);
  }
  floors.Stop();
  for (auto* a : extenders->all()) a->server().Stop();
  return 0;
}
