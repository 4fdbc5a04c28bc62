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
// Exit status 1 on any error, on RSS after warm-up rising more than max-rss-growth above its first
// sample after warm-up (max/first - 1: a leak grows; the server's periodic malloc_trim only lowers it), or
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
#include "bench/loadgen/run_stats.h"
#include "bench/loadgen/scale_cluster.h"

namespace {

using namespace topofit;
using Clock = std::chrono::steady_clock;
using bench::LoadAverage;
using bench::Percentile;

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

const int kGpus[10] = {1, 1, 1, 1, 2, 2, 2, 4, 4, 8};

// One worker: pods one after another, its requests paced to rate / workers.
class Worker {
 public:
  Worker(Shared& s, int worker)
      : s_(s),
        worker_(worker),
        c_("127.0.0.1", s.port),
        keep_(size_t(std::max(1, s.o.live_pods / s.o.workers))),
        period_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s.o.workers / s.o.rate))),
        // Workers start spread over one period, so their requests interleave.
        next_(s.start + period_ * worker / s.o.workers) {}

  void Run() {
    while (Clock::now() < s_.end) {
      long k = s_.next_pod.fetch_add(1);
      std::string name = fmt::format("soak-{}", k);
      if (!Schedule(name, kGpus[k % 10])) continue;
      live_.push_back(name);
      if (live_.size() > keep_) DeleteOldest(true);
    }
    while (!live_.empty()) DeleteOldest(false);
  }

 private:
  // Filter, prioritize and bind of one pod, as kube-scheduler sends them; false when one failed
  // (recorded).
  bool Schedule(const std::string& name, int gpus) {
    std::string pod = PodJson(name, gpus);
    std::string args = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + s_.names + "}";
    if (!Timed(kFilter, "POST", "/scheduler/filter", args, true)) return false;
    if (std::string e = ReplyError(kFilter, c_.last_body()); !e.empty()) return Failed(kFilter, e);
    // Prioritize gets the nodes filter kept, as kube-scheduler sends them.
    std::string kept = KeptNames();
    if (kept.empty()) return Failed(kFilter, "reply has no NodeNames");
    std::string prioritize = R"({"Pod":)" + pod + R"(,"Nodes":null,"NodeNames":)" + kept + "}";
    if (!Timed(kPrioritize, "POST", "/scheduler/prioritize", prioritize, true)) return false;
    std::string best = BestOfShare();
    if (best.empty()) return false;
    std::string bind = fmt::format(R"({{"PodName":"{0}","PodNamespace":"soak","PodUID":"uid-{0}","Node":"{1}"}})", name, best);
    if (!Timed(kBind, "POST", "/scheduler/bind", bind, true)) return false;
    if (std::string e = ReplyError(kBind, c_.last_body()); !e.empty()) return Failed(kBind, e);
    return true;
  }

  // The request's status, 0 on an error (recorded); a paced request waits for its turn first.
  int Timed(Verb verb, std::string_view method, const std::string& path, std::string_view body, bool paced) {
    if (paced) {
      next_ += period_;
      std::this_thread::sleep_until(next_);
    }
    auto t0 = Clock::now();
    int status = c_.Send(method, path, body);
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    bool error = status != 200;
    if (error) s_.rec.Error(fmt::format("{} {}: HTTP status {}", method, path, status));
    if (paced) s_.rec.Add(verb, ms, error);
    else if (error) s_.rec.AddError();
    return error ? 0 : status;
  }

  std::string ReplyError(Verb verb, std::string_view body) {
    simdjson::dom::element root;
    if (parser_.parse(body.data(), body.size(), true).get(root) != simdjson::SUCCESS) return "reply is not JSON";
    std::string_view err;
    if (root["Error"].get(err) == simdjson::SUCCESS && !err.empty()) return std::string(err);
    if (verb == kFilter) {
      simdjson::dom::array names;
      if (root["NodeNames"].get(names) != simdjson::SUCCESS || names.size() == 0) return "filter kept no node";
    }
    return {};
  }

  // The NodeNames of the last (filter) reply as a JSON array; "" when it has none.
  std::string KeptNames() {
    std::string kept = "[";
    simdjson::dom::element filtered;
    simdjson::dom::array kept_names;
    if (parser_.parse(c_.last_body().data(), c_.last_body().size(), true).get(filtered) != simdjson::SUCCESS ||
        filtered["NodeNames"].get(kept_names) != simdjson::SUCCESS)
      return "";
    for (simdjson::dom::element n : kept_names) {
      kept += kept.size() > 1 ? ",\"" : "\"";
      kept += std::string_view(n.get_string().value_unsafe());
      kept += '"';
    }
    return kept + ']';
  }

  // The best-scored node of the last (prioritize) reply in this worker's share of the nodes (index %
  // workers == worker): workers schedule concurrently, so each binds only in its own share, as one
  // scheduler would - two pods chosen at once for the same free GPUs would be a race of the client,
  // not an error. "" when there is none (recorded).
  std::string BestOfShare() {
    std::string best;
    int64_t best_score = -1;
    simdjson::dom::array hosts;
    if (parser_.parse(c_.last_body().data(), c_.last_body().size(), true).get(hosts) != simdjson::SUCCESS)
    {
      Failed(kPrioritize, "reply is not a JSON array");
      return "";
    }
    for (simdjson::dom::element h : hosts) {
      std::string_view host = h["Host"].get_string().value_unsafe();
      auto at = s_.index.find(host);
      if (at == s_.index.end() || at->second % s_.o.workers != worker_) continue;
      int64_t score = h["Score"].get_int64().value_unsafe();
      if (score > best_score) best_score = score, best = std::string(host);
    }
    if (best.empty()) Failed(kPrioritize, "no node of this worker's share passed filter");
    return best;
  }

  // Records an error found in a reply; false, for Schedule to return.
  bool Failed(Verb verb, const std::string& what) {
    s_.rec.AddError();
    s_.rec.Error(fmt::format("{}: {}", kVerbNames[verb], what));
    return false;
  }

  void DeleteOldest(bool paced) {
    std::string path = "/api/v1/pods/soak/" + live_.front();
    live_.pop_front();
    Timed(kDelete, "DELETE", path, "", paced);
  }

  Shared& s_;
  const int worker_;
  bench::RawHttpClient c_;
  simdjson::dom::parser parser_;
  std::deque<std::string> live_;
  const size_t keep_;
  const Clock::duration period_;
  Clock::time_point next_;
};

// The flags; false (after saying why) when they are not usable.
bool ParseOptions(int argc, char** argv, Options& o) {
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
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), false;
  }
  if (o.topofit.empty() || o.nodes <= 0 || o.workers <= 0 || o.rate <= 0)
    return std::fprintf(stderr, "usage: extender_soak --topofit PATH [--nodes N] [--rate R] [--duration S]\n"), false;
  return true;
}

// The server's RSS every 5 s and a line per interval as the run goes: requests, rate, errors, p50/p99
// per verb, RSS and the load average.
class Monitor {
 public:
  Monitor(const Options& o, Recorder& rec) : o_(o), rec_(rec), intervals_(size_t(std::ceil(o.duration_s / o.interval_s))) {}

  static void PrintHeader(const Options& o, pid_t server) {
    std::printf("extender_soak: %d nodes x 8 GPUs, %.0f requests/s (filter, prioritize, bind, delete), %d workers, "
                "up to %d live pods, %.0f s; server pid %d\n",
                o.nodes, o.rate, o.workers, o.live_pods, o.duration_s, int(server));
    std::printf("%8s %8s %7s %6s  %-15s %-15s %-15s %-15s %8s %6s\n", "t (s)", "requests", "rate/s", "errors",
                "filter p50/p99", "prioritize", "bind", "delete", "RSS MiB", "load1");
    std::fflush(stdout);
  }

  // Every second until the run's end (or the server's): RSS samples and the intervals past.
  void Watch(Clock::time_point start, testing::TopofitProcess& serve) {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      double t = std::chrono::duration<double>(Clock::now() - start).count();
      if (rss_.empty() || t - rss_.back().first >= 5) rss_.emplace_back(t, bench::ProcStatusKb(serve.pid(), "VmRSS"));
      while (printed_ < intervals_ && t >= double(printed_ + 1) * o_.interval_s + 1) PrintInterval(printed_++);
      if (t >= o_.duration_s + 1 || serve.Exited()) break;
    }
  }
  void PrintRest() {
    while (printed_ < intervals_) PrintInterval(printed_++);
  }

  // The summary line; false when the RSS after warm-up rose more than allowed above its first sample.
  bool PrintSummary(long errors) const {
    long lo = 0, hi = 0, first = 0;
    for (auto [t, kb] : rss_) {
      if (t < o_.warmup_s || kb <= 0) continue;
      if (!first) first = kb;
      lo = lo ? std::min(lo, kb) : kb;
      hi = std::max(hi, kb);
    }
    double growth = first ? double(hi) / double(first) - 1 : 0;
    auto [p99_lo, p99_hi] = std::minmax_element(p99s_.begin(), p99s_.end());
    std::printf("errors %ld; RSS after %.0f s warm-up %.1f-%.1f MiB (rose %.1f%% above its first sample, bound %.0f%%); p99 per interval "
                "(all verbs) %.2f-%.2f ms\n",
                errors, o_.warmup_s, lo / 1024.0, hi / 1024.0, 100 * growth, 100 * o_.max_rss_growth,
                p99s_.empty() ? 0 : *p99_lo, p99s_.empty() ? 0 : *p99_hi);
    return growth <= o_.max_rss_growth;
  }

 private:
  void PrintInterval(size_t i) {
    Interval iv = rec_.Take(i);
    long n = 0;
    std::string cols;
    std::vector<double> all;
    for (int v = 0; v < kVerbs; ++v) {
      n += long(iv.ms[v].size());
      all.insert(all.end(), iv.ms[v].begin(), iv.ms[v].end());
      cols += fmt::format(" {:<15}", fmt::format("{:.2f}/{:.2f}", Percentile(iv.ms[v], 0.5), Percentile(iv.ms[v], 0.99)));
    }
    p99s_.push_back(Percentile(all, 0.99));
    double len = std::min(o_.interval_s, o_.duration_s - double(i) * o_.interval_s);
    std::printf("%8.0f %8ld %7.0f %6ld %s %8.1f %6s\n", double(i + 1) * o_.interval_s, n, n / len, iv.errors, cols.c_str(),
                rss_.empty() ? 0.0 : rss_.back().second / 1024.0, LoadAverage().c_str());
    std::fflush(stdout);
  }

  const Options& o_;
  Recorder& rec_;
  const size_t intervals_;
  size_t printed_ = 0;
  std::vector<std::pair<double, long>> rss_;  // (seconds, KiB), every 5 s.
  std::vector<double> p99s_;
};

// Every pod is deleted: the model must have every GPU free and nothing reserved. -1 when
// /api/v1/nodes cannot be read, else 0 (all free) or 1.
int CheckAllFree(int port) {
  bench::RawHttpClient c("127.0.0.1", port);
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (c.Send("GET", "/api/v1/nodes", "") != 200 ||
      parser.parse(c.last_body().data(), c.last_body().size(), true).get(root) != simdjson::SUCCESS) {
    std::printf("cannot read /api/v1/nodes at the end\n");
    return -1;
  }
  int64_t usable = root["totals"]["usableGpus"].get_int64().value_unsafe();
  int64_t free = root["totals"]["freeGpus"].get_int64().value_unsafe();
  int64_t reserved = root["totals"]["reservedGpus"].get_int64().value_unsafe();
  std::printf("after deleting every pod: %lld of %lld GPUs free, %lld reserved\n", (long long)free, (long long)usable,
              (long long)reserved);
  return free != usable || reserved != 0 ? 1 : 0;
}

// The NodeNames JSON array of every node.
std::string NamesJson(const std::vector<std::string>& node_names) {
  std::string names = "[";
  for (size_t i = 0; i < node_names.size(); ++i) names += (i ? ",\"" : "\"") + node_names[i] + "\"";
  return names + "]";
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) return 2;
  std::string snapshot = o.dir + "/topofit-soak-" + std::to_string(getpid()) + ".json";
  if (bench::WriteScaleSnapshot(snapshot, o.nodes, 0) < 0) return std::fprintf(stderr, "cannot write %s\n", snapshot.c_str()), 1;
  testing::TopofitProcess serve(o.topofit, bench::ServeArgs({"--snapshot", snapshot}),
                                o.dir + "/topofit-soak-" + std::to_string(getpid()) + ".log");
  int port = serve.WaitForLoggedPort("listen", std::chrono::seconds(120));
  std::remove(snapshot.c_str());
  if (port == 0) return std::fprintf(stderr, "topofit serve did not start:\n%s\n", serve.log().c_str()), 1;

  std::vector<std::string> node_names;
  for (int i = 0; i < o.nodes; ++i) node_names.push_back(k8s::testing::Ec2NodeName(i));
  auto start = Clock::now() + std::chrono::milliseconds(100);
  Recorder rec(start, o.interval_s);
  Shared shared{o, port, NamesJson(node_names), {}, start, start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s)), rec};
  Monitor::PrintHeader(o, serve.pid());

  for (int i = 0; i < o.nodes; ++i) shared.index[node_names[i]] = i;
  std::vector<std::thread> workers;
  for (int w = 0; w < o.workers; ++w) workers.emplace_back([&shared, w] { Worker(shared, w).Run(); });
  Monitor monitor(o, rec);
  monitor.Watch(start, serve);
  for (auto& w : workers) w.join();
  monitor.PrintRest();

  long errors = rec.errors();
  int status = monitor.PrintSummary(errors) ? 0 : 1;
  if (errors > 0 || serve.Exited()) status = 1;
  int freed = CheckAllFree(port);
  if (freed < 0) return 1;
  if (freed > 0) status = 1;
  std::printf("%s\n", status ? "FAIL" : "PASS");
  return status;
}
