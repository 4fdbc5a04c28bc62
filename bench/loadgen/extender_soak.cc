// extender_soak: `topofit serve --snapshot` under a steady mixed load for a long time - errors, memory
// over time, latency per interval.
//
//   build/bench/extender_soak --topofit build/extender/cli/topofit [--nodes 5000] [--rate 1000]
//       [--duration 600] [--interval 60] [--warmup 60] [--workers 4] [--live-pods 5000]
//       [--max-rss-growth 0.05]
//
// The server gets a snapshot of `nodes` 8-GPU nodes (scale_cluster.h, no pods). Each worker repeats a
// pod's life as kube-scheduler and the cluster drive it: filter (node-cache mode, every node's name),
// prioritize (the nodes filter kept), bind to the best-scored node of the worker's share of the
// nodes (so that concurrent workers never race for the same GPUs), and, once the worker holds more than its
// share of `live-pods`, DELETE /api/v1/pods of its oldest pod (snapshot mode's way to say a pod is
// gone), so the model keeps changing. Pods ask for 1, 2, 4 or 8 GPUs (4:3:2:1); names are never
// reused. Requests of all four kinds are paced to `rate` per second in total.
// An error: a transport failure, an HTTP status other than 200, a filter that keeps no node, a reply
// whose Error is set. Per interval it prints requests, achieved rate, errors, median and p99 per verb,
// RSS (VmRSS of the server) and the load average; every 5 s it samples RSS. At the end it deletes
// every pod still live and checks that the model has every GPU free again.
// Exit status 1 on any error, on RSS after warm-up spread more than max-rss-growth (max/min - 1), or
// when GPUs are still held at the end.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench/loadgen/child_process.h"
#include "bench/loadgen/raw_http_client.h"
#include "bench/loadgen/scale_cluster.h"

namespace {

using namespace topofit;
using Clock = std::chrono::steady_clock;

enum Verb { kFilter, kPrioritize, kBind, kDelete, kVerbs };
const char* kVerbNames[kVerbs] = {"filter", "prioritize", "bind", "delete"};

struct Interval {
  std::vector<double> ms[kVerbs];
  long errors = 0;
};

class Recorder {
 public:
  explicit Recorder(Clock::time_point start, double interval_s) : start_(start), interval_s_(interval_s) {}
  void Add(Verb verb, double ms, bool error) {
    size_t i = size_t(std::chrono::duration<double>(Clock::now() - start_).count() / interval_s_);
    std::lock_guard<std::mutex> lock(mu_);
    if (intervals_.size() <= i) intervals_.resize(i + 1);
    intervals_[i].ms[verb].push_back(ms);
    intervals_[i].errors += error;
    if (error) ++errors_;
  }
  void AddError() {  // An error found in a reply, or outside the paced requests.
    std::lock_guard<std::mutex> lock(mu_);
    ++errors_;
    size_t i = size_t(std::chrono::duration<double>(Clock::now() - start_).count() / interval_s_);
    if (intervals_.size() <= i) intervals_.resize(i + 1);
    ++intervals_[i].errors;
  }
  Interval Take(size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (intervals_.size() <= i) intervals_.resize(i + 1);
    return std::move(intervals_[i]);
  }
  long errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }
  void Error(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    if (shown_++ < 10) std::fprintf(stderr, "error: %s\n", what.c_str());
  }

 private:
  Clock::time_point start_;
  double interval_s_;
  std::mutex mu_;
  std::vector<Interval> intervals_;
  long errors_ = 0;
  int shown_ = 0;
};

double Percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * v.size()))];
}

std::string LoadAverage() {
  std::string s = bench::SlurpFile("/proc/loadavg");
  return s.substr(0, s.find(' '));
}

std::string PodJson(const std::string& name, int gpus) {
  return fmt::format(
      R"({{"metadata":{{"name":"{0}","namespace":"soak","uid":"uid-{0}"}},"spec":{{"schedulerName":"topofit","containers":[{{"name":"c","resources":{{"requests":{{"cpu":"4","memory":"16Gi"}},"limits":{{"nvidia.com/gpu":"{1}"}}}}}}]}},"status":{{"phase":"Pending"}}}})",
      name, gpus);
}

struct Options {
  std::string topofit, dir = "/tmp";
  int nodes = 5000, workers = 4, live_pods = 5000;
  double rate = 1000, duration_s = 600, interval_s = 60, warmup_s = 60, max_rss_growth = 0.05;
};

struct Shared {
  const Options& o;
  int port;
  std::string names;  // The NodeNames JSON array.
  std::unordered_map<std::string_view, int> index;  // Node name -> its index.
  Clock::time_point start, end;
  Recorder& rec;
  std::atomic<long> next_pod{0};
};

// One worker: pods one after another, its requests paced to rate / workers.
void Work(Shared& s, int worker) {
  bench::RawHttpClient c("127.0.0.1", s.port);
  simdjson::dom::parser parser;
  std::deque<std::string> live;
  const size_t keep = size_t(std::max(1, s.o.live_pods / s.o.workers));
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.o.workers / s.o.rate));
  // Workers start spread over one period, so their requests interleave.
  Clock::time_point next = s.start + period * worker / s.o.workers;
  auto timed = [&](Verb verb, std::string_view method, const std::string& path, std::string_view body,
                   bool paced) -> int {
    if (paced) {
      next += period;
      std::this_thread::sleep_until(next);
    }
    auto t0 = Clock::now();
    int status = c.Send(method, path, body);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    bool error = status != 200;
    if (error) s.rec.Error(fmt::format("{} {}: HTTP status {}", method, path, status));
    if (paced) s.rec.Add(verb, ms, error);
    else if (error) s.rec.AddError();
    return error ? 0 : status;
  };
  auto reply_error = [&](Verb verb, std::string_view body) -> std::string {
    simdjson::dom::element root;
    if (parser.parse(body.data(), body.size(), true).get(root) != simdjson::SUCCESS) return "reply is not JSON";
    std::string_view err;
    if (root["Error"].get(err) == simdjson::SUCCESS && !err.empty()) return std::string(err);
    if (verb == kFilter) {
      simdjson::dom::array names;
      if (root["NodeNames"].get(names) != simdjson::SUCCESS || names.size() == 0) return "filter kept no node";
    }
    return {};
  };
  auto failed = [&](Verb verb, const std::string& what) {
    s.rec.AddError();
    s.rec.Error(fmt::format("{}: {}", kVerbNames[verb], what));
  };
  auto delete_oldest = [&](bool paced) {
    std::string path = "/api/v1/pods/soak/" + live.front();
    live.pop_front();
    timed(kDelete, "DELETE", path, "", paced);
  };
  while (Clock::now() < s.end) {
    long k = s.next_pod.fetch_add(1);
    static const int kGpus[10] = {1, 1, 1, 1, 2, 2, 2, 4, 4, 8};
    std::string name = fmt::format("soak-{}", k);
    std::string pod = PodJson(name, kGpus[k % 10]);
    std::string args = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + s.names + "}";
    if (!timed(kFilter, "POST", "/scheduler/filter", args, true)) continue;
    if (std::string e = reply_error(kFilter, c.last_body()); !e.empty()) {
      failed(kFilter, e);
      continue;
    }
    // Prioritize gets the nodes filter kept, as kube-scheduler sends them.
    std::string kept = "[";
    simdjson::dom::element filtered;
    simdjson::dom::array kept_names;
    if (parser.parse(c.last_body().data(), c.last_body().size(), true).get(filtered) != simdjson::SUCCESS ||
        filtered["NodeNames"].get(kept_names) != simdjson::SUCCESS) {
      failed(kFilter, "reply has no NodeNames");
      continue;
    }
    for (simdjson::dom::element n : kept_names) {
      kept += kept.size() > 1 ? ",\"" : "\"";
      kept += std::string_view(n.get_string().value_unsafe());
      kept += '"';
    }
    kept += ']';
    std::string prioritize = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + kept + "}";
    if (!timed(kPrioritize, "POST", "/scheduler/prioritize", prioritize, true)) continue;
    // The best-scored node of this worker's share of the nodes (index % workers == worker): workers
    // schedule concurrently, so each binds only in its own share, as one scheduler would - two
    // pods chosen at once for the same free GPUs would be a race of the client, not an error.
    std::string best;
    int64_t best_score = -1;
    simdjson::dom::array hosts;
    if (parser.parse(c.last_body().data(), c.last_body().size(), true).get(hosts) != simdjson::SUCCESS) {
      failed(kPrioritize, "reply is not a JSON array");
      continue;
    }
    for (simdjson::dom::element h : hosts) {
      std::string_view host = h["Host"].get_string().value_unsafe();
      auto at = s.index.find(host);
      if (at == s.index.end() || at->second % s.o.workers != worker) continue;
      int64_t score = h["Score"].get_int64().value_unsafe();
      if (score > best_score) best_score = score, best = std::string(host);
    }
    if (best.empty()) {
      failed(kPrioritize, "no node of this worker's share passed filter");
      continue;
    }
    std::string bind = fmt::format(R"({{"PodName":"{0}","PodNamespace":"soak","PodUID":"uid-{0}","Node":"{1}"}})", name, best);
    if (!timed(kBind, "POST", "/scheduler/bind", bind, true)) continue;
    if (std::string e = reply_error(kBind, c.last_body()); !e.empty()) {
      failed(kBind, e);
      continue;
    }
    live.push_back(name);
    if (live.size() > keep) delete_oldest(true);
  }
  while (!live.empty()) delete_oldest(false);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], v = argv[i + 1];
    if (flag == "--topofit") o.topofit = v;
    else if (flag == "--dir") o.dir = v;
    else if (flag == "--nodes") o.nodes = std::atoi(v.c_str());
    else if (flag == "--workers") o.workers = std::atoi(v.c_str());
    else if (flag == "--live-pods") o.live_pods = std::atoi(v.c_str());
    else if (flag == "--rate") o.rate = std::atof(v.c_str());
    else if (flag == "--duration") o.duration_s = std::atof(v.c_str());
    else if (flag == "--interval") o.interval_s = std::atof(v.c_str());
    else if (flag == "--warmup") o.warmup_s = std::atof(v.c_str());
    else if (flag == "--max-rss-growth") o.max_rss_growth = std::atof(v.c_str());
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), 2;
  }
  if (o.topofit.empty() || o.nodes <= 0 || o.workers <= 0 || o.rate <= 0)
    return std::fprintf(stderr, "usage: extender_soak --topofit PATH [--nodes N] [--rate R] [--duration S]\n"), 2;

  std::string snapshot = o.dir + "/topofit-soak-" + std::to_string(getpid()) + ".json";
  if (bench::WriteScaleSnapshot(snapshot, o.nodes, 0) < 0) return std::fprintf(stderr, "cannot write %s\n", snapshot.c_str()), 1;
  bench::ChildServe serve(o.topofit, {"--snapshot", snapshot}, o.dir + "/topofit-soak-" + std::to_string(getpid()) + ".log");
  int port = serve.WaitListening(std::chrono::seconds(120));
  std::remove(snapshot.c_str());
  if (port == 0) return std::fprintf(stderr, "topofit serve did not start:\n%s\n", serve.log().c_str()), 1;

  std::string names = "[";
  std::vector<std::string> node_names;
  for (int i = 0; i < o.nodes; ++i) node_names.push_back(k8s::testing::Ec2NodeName(i));
  for (int i = 0; i < o.nodes; ++i) names += (i ? ",\"" : "\"") + node_names[i] + "\"";
  names += "]";
  auto start = Clock::now() + std::chrono::milliseconds(100);
  Recorder rec(start, o.interval_s);
  Shared shared{o, port, names, {}, start, start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s)), rec};
  std::printf("extender_soak: %d nodes x 8 GPUs, %.0f requests/s (filter, prioritize, bind, delete), %d workers, "
              "up to %d live pods, %.0f s; server pid %d\n",
              o.nodes, o.rate, o.workers, o.live_pods, o.duration_s, int(serve.pid()));
  std::printf("%8s %8s %7s %6s  %-15s %-15s %-15s %-15s %8s %6s\n", "t (s)", "requests", "rate/s", "errors",
              "filter p50/p99", "prioritize", "bind", "delete", "RSS MiB", "load1");
  std::fflush(stdout);

  for (int i = 0; i < o.nodes; ++i) shared.index[node_names[i]] = i;
  std::vector<std::thread> workers;
  for (int w = 0; w < o.workers; ++w) workers.emplace_back([&shared, w] { Work(shared, w); });

  std::vector<std::pair<double, long>> rss;  // (seconds, KiB), every 5 s.
  std::vector<double> p99s;
  size_t printed = 0;
  const size_t intervals = size_t(std::ceil(o.duration_s / o.interval_s));
  auto print_interval = [&](size_t i) {
    Interval iv = rec.Take(i);
    long n = 0;
    std::string cols;
    std::vector<double> all;
    for (int v = 0; v < kVerbs; ++v) {
      n += long(iv.ms[v].size());
      all.insert(all.end(), iv.ms[v].begin(), iv.ms[v].end());
      cols += fmt::format(" {:<15}", fmt::format("{:.2f}/{:.2f}", Percentile(iv.ms[v], 0.5), Percentile(iv.ms[v], 0.99)));
    }
    p99s.push_back(Percentile(all, 0.99));
    double len = std::min(o.interval_s, o.duration_s - double(i) * o.interval_s);
    std::printf("%8.0f %8ld %7.0f %6ld %s %8.1f %6s\n", double(i + 1) * o.interval_s, n, n / len, iv.errors, cols.c_str(),
                rss.empty() ? 0.0 : rss.back().second / 1024.0, LoadAverage().c_str());
    std::fflush(stdout);
  };
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    double t = std::chrono::duration<double>(Clock::now() - start).count();
    if (rss.empty() || t - rss.back().first >= 5) rss.emplace_back(t, bench::ProcStatusKb(serve.pid(), "VmRSS"));
    while (printed < intervals && t >= double(printed + 1) * o.interval_s + 1) print_interval(printed++);
    if (t >= o.duration_s + 1 || serve.exited()) break;
  }
  for (auto& w : workers) w.join();
  while (printed < intervals) print_interval(printed++);

  int status = 0;
  long errors = rec.errors();
  long lo = 0, hi = 0;
  for (auto [t, kb] : rss) {
    if (t < o.warmup_s || kb <= 0) continue;
    lo = lo ? std::min(lo, kb) : kb;
    hi = std::max(hi, kb);
  }
  double growth = lo ? double(hi) / double(lo) - 1 : 0;
  auto [p99_lo, p99_hi] = std::minmax_element(p99s.begin(), p99s.end());
  std::printf("errors %ld; RSS after %.0f s warm-up %.1f-%.1f MiB (spread %.1f%%, bound %.0f%%); p99 per interval "
              "(all verbs) %.2f-%.2f ms\n",
              errors, o.warmup_s, lo / 1024.0, hi / 1024.0, 100 * growth, 100 * o.max_rss_growth,
              p99s.empty() ? 0 : *p99_lo, p99s.empty() ? 0 : *p99_hi);
  if (errors > 0 || serve.exited()) status = 1;
  if (growth > o.max_rss_growth) status = 1;

  // Every pod is deleted: the model must have every GPU free and nothing reserved.
  bench::RawHttpClient c("127.0.0.1", port);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (c.Send("GET", "/api/v1/nodes", "") != 200 ||
      parser.parse(c.last_body().data(), c.last_body().size(), true).get(root) != simdjson::SUCCESS) {
    std::printf("cannot read /api/v1/nodes at the end\n");
    return 1;
  }
  int64_t usable = root["totals"]["usableGpus"].get_int64().value_unsafe();
  int64_t free = root["totals"]["freeGpus"].get_int64().value_unsafe();
  int64_t reserved = root["totals"]["reservedGpus"].get_int64().value_unsafe();
  std::printf("after deleting every pod: %lld of %lld GPUs free, %lld reserved\n", (long long)free, (long long)usable,
              (long long)reserved);
  if (free != usable || reserved != 0) status = 1;
  std::printf("%s\n", status ? "FAIL" : "PASS");
  return status;
}
