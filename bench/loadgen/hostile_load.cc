// hostile_load: `topofit serve --snapshot` on a large cluster, a well-behaved client sending filter and
// prioritize as kube-scheduler does, in quiet phases and in hostile phases where HostileTraffic
// (hostile_traffic.h) hits the same port (issue 24, item 3).
//
//   build/bench/hostile_load --topofit build/extender/cli/topofit [--nodes 5000] [--rate 20]
//       [--rounds 3] [--quiet 20] [--hostile 20] [--stalled 2000] [--slow 500] [--garbage 200]
//       [--huge 100] [--bombs 50] [--explains 200] [--reconnects 500]
//       [--max-p99-ratio 2] [--p99-floor-ms 0] [--max-rss-ratio 2]
//
// The server listens on one port for everything (no --ops-listen): the hostile clients share the
// listener, its reader thread and its workers with the verbs, the harder case (as deployed the verbs
// listen on 127.0.0.1 and only the ops port is in reach of other pods). Its snapshot: `nodes` idle
// 8-GPU nodes (scale_cluster.h), so that filter keeps every node and prioritize scores them all.
// The good client: one keep-alive connection (a new one when the server has closed it, as Go's
// transport does), `rate` pods a second, each a filter with every node's name (node-cache mode)
// and a prioritize with the names filter kept. Rounds alternate a quiet phase and a hostile phase
// of the given seconds, so that the machine's other load falls on both alike.
// Reports, per phase kind, the good client's p50/p90/p99 of filter, prioritize and the pair; its
// errors (a transport failure, a status other than 200, an Error in the reply, a filter that kept no
// node); the server's RSS (VmRSS every 100 ms: steady = the median of the first quiet phase, before
// any hostile traffic; peak = the most in any phase); what the hostile clients were answered; whether the server is still up (the same process,
// /healthz 200).
// Exit status 1 when the good client saw an error, the p99 of filter or prioritize in hostile phases
// exceeds both max-p99-ratio times the quiet one and p99-floor-ms (a floor for machines whose
// scheduling noise alone moves a millisecond p99 by more than the ratio), the RSS peak exceeds
// max-rss-ratio times the steady RSS, or the server exited.
#include <fmt/format.h>
#include <simdjson.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench/loadgen/child_process.h"
#include "bench/loadgen/hostile_traffic.h"
#include "bench/loadgen/raw_http_client.h"
#include "bench/loadgen/run_stats.h"
#include "bench/loadgen/scale_cluster.h"

namespace {

using namespace topofit;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string topofit, dir = "/tmp";
  int nodes = 5000, rounds = 3;
  double rate = 20, quiet_s = 20, hostile_s = 20, max_p99_ratio = 2, max_rss_ratio = 2, p99_floor_ms = 0;
  bench::HostileMix mix;
};

enum Phase { kQuiet, kHostile, kPhases };
const char* kPhaseNames[kPhases] = {"quiet", "hostile"};

// The good client's samples, by phase kind.
struct Samples {
  std::mutex mu;
  std::vector<double> filter[kPhases], prioritize[kPhases], cycle[kPhases];
  long errors[kPhases] = {};
  std::vector<long> rss_kb[kPhases];
  std::vector<long> steady_kb;  // The first quiet phase's: before any hostile traffic.
};

// kube-scheduler's side: filter then prioritize of one pod after another, paced at `rate`.
class GoodClient {
 public:
  GoodClient(int port, const Options& o, Samples& s, const std::atomic<int>& phase)
      : c_("127.0.0.1", port), o_(o), s_(s), phase_(phase) {
    c_.set_drop_closed_idle(true);
    names_ = "[";
    for (int i = 0; i < o.nodes; ++i) names_ += (i ? ",\"" : "\"") + k8s::testing::Ec2NodeName(i) + "\"";
    names_ += "]";
  }

  void Run(const std::atomic<bool>& stop) {
    const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1 / o_.rate));
    auto next = Clock::now();
    for (long k = 0; !stop.load(); ++k) {
      next += period;
      std::this_thread::sleep_until(next);
      const int phase = phase_.load();
      if (phase < 0) continue;  // Between phases: nothing is recorded.
      double filter_ms = 0, prioritize_ms = 0;
      std::string error = Cycle(k, &filter_ms, &prioritize_ms);
      std::lock_guard<std::mutex> lock(s_.mu);
      if (!error.empty()) {
        if (s_.errors[kQuiet] + s_.errors[kHostile] < 10) std::fprintf(stderr, "good client, %s phase: %s\n", kPhaseNames[phase], error.c_str());
        ++s_.errors[phase];
        continue;
      }
      s_.filter[phase].push_back(filter_ms);
      s_.prioritize[phase].push_back(prioritize_ms);
      s_.cycle[phase].push_back(filter_ms + prioritize_ms);
    }
  }

 private:
  // One pod's filter and prioritize; "" or what went wrong.
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

  std::string Timed(const std::string& path, const std::string& body, double* ms) {
    auto t0 = Clock::now();
    int status = c_.Post(path, body);
    *ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (status != 200) return fmt::format("HTTP status {}", status);
    std::string_view reply = c_.last_body();
    if (reply.find(R"("Error":")") != std::string_view::npos && reply.find(R"("Error":"")") == std::string_view::npos)
      return "an Error in the reply: " + std::string(reply.substr(0, 300));
    return "";
  }

  bench::RawHttpClient c_;
  const Options& o_;
  Samples& s_;
  const std::atomic<int>& phase_;
  std::string names_;
  simdjson::dom::parser parser_;
};

bool ParseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], v = argv[i + 1];
    double x = std::atof(v.c_str());
    if (flag == "--topofit") o.topofit = v;
    else if (flag == "--dir") o.dir = v;
    else if (flag == "--nodes") o.nodes = int(x);
    else if (flag == "--rate") o.rate = x;
    else if (flag == "--rounds") o.rounds = int(x);
    else if (flag == "--quiet") o.quiet_s = x;
    else if (flag == "--hostile") o.hostile_s = x;
    else if (flag == "--stalled") o.mix.stalled = int(x);
    else if (flag == "--slow") o.mix.slow = int(x);
    else if (flag == "--garbage") o.mix.garbage_per_s = x;
    else if (flag == "--huge") o.mix.huge_per_s = x;
    else if (flag == "--bombs") o.mix.bomb_per_s = x;
    else if (flag == "--explains") o.mix.explain_per_s = x;
    else if (flag == "--reconnects") o.mix.reconnect_per_s = x;
    else if (flag == "--max-p99-ratio") o.max_p99_ratio = x;
    else if (flag == "--max-rss-ratio") o.max_rss_ratio = x;
    else if (flag == "--p99-floor-ms") o.p99_floor_ms = x;
    else return std::fprintf(stderr, "unknown flag %s\n", flag.c_str()), false;
  }
  if (o.topofit.empty() || o.nodes <= 0 || o.rate <= 0 || o.rounds <= 0)
    return std::fprintf(stderr, "usage: hostile_load --topofit PATH [--nodes N] [--rate R] [--rounds N] ...\n"), false;
  return true;
}

// Samples the server's RSS every 100 ms for `seconds` into `phase`'s samples (and the steady ones
// when `steady`); false when it exited.
bool Watch(testing::TopofitProcess& serve, Samples& s, int phase, double seconds, bool steady = false) {
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (serve.Exited()) return false;
    long kb = bench::ProcStatusKb(serve.pid(), "VmRSS");
    std::lock_guard<std::mutex> lock(s.mu);
    if (kb > 0) s.rss_kb[phase].push_back(kb);
    if (kb > 0 && steady) s.steady_kb.push_back(kb);
  }
  return true;
}

std::string Triple(std::vector<double>& v) {
  return fmt::format("{:.2f} / {:.2f} / {:.2f}", bench::Percentile(v, 0.5), bench::Percentile(v, 0.9), bench::Percentile(v, 0.99));
}

// The latency table; whether the hostile p99 of filter and of prioritize are within the bound.
bool PrintLatency(Samples& s, const Options& o) {
  std::printf("\ngood client, ms          %-24s %-24s %-24s %8s %6s\n", "filter p50 / p90 / p99", "prioritize", "filter + prioritize",
              "pods", "errors");
  for (int p = 0; p < kPhases; ++p)
    std::printf("%-24s %-24s %-24s %-24s %8zu %6ld\n", kPhaseNames[p], Triple(s.filter[p]).c_str(), Triple(s.prioritize[p]).c_str(),
                Triple(s.cycle[p]).c_str(), s.cycle[p].size(), s.errors[p]);
  bool within = true;
  std::string ratios;
  for (auto* v : {s.filter, s.prioritize, s.cycle}) {
    double q = bench::Percentile(v[kQuiet], 0.99), h = bench::Percentile(v[kHostile], 0.99);
    ratios += fmt::format("{}{:.2f}x", ratios.empty() ? "" : ", ", q > 0 ? h / q : 0);
    if (v != s.cycle) within = within && h <= std::max(o.max_p99_ratio * q, o.p99_floor_ms);
  }
  std::printf("p99 hostile / quiet: filter, prioritize, both: %s\n", ratios.c_str());
  return within;
}

// The RSS line; peak / steady.
double PrintRss(Samples& s, pid_t pid) {
  std::vector<double> quiet(s.steady_kb.begin(), s.steady_kb.end());
  double steady = bench::Percentile(quiet, 0.5), peak = 0;
  for (auto& v : s.rss_kb)
    for (long kb : v) peak = std::max(peak, double(kb));
  long hwm = bench::ProcStatusKb(pid, "VmHWM");
  std::printf("server RSS: steady (median of the first quiet phase) %.1f MiB, peak %.1f MiB (%.2fx), VmHWM %.1f MiB\n", steady / 1024,
              peak / 1024, steady > 0 ? peak / steady : 0, double(hwm) / 1024);
  return steady > 0 ? peak / steady : 0;
}

void PrintHostile(const std::map<std::string, long>& counts) {
  std::string out;
  for (const auto& [what, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", what, n);
  std::printf("hostile clients were answered: %s\n", out.c_str());
}

// Quiet and hostile phases in turn; false when the server exited.
bool RunRounds(const Options& o, int port, testing::TopofitProcess& serve, Samples& s, std::atomic<int>& phase,
               std::map<std::string, long>& answered) {
  for (int r = 0; r < o.rounds; ++r) {
    phase.store(kQuiet);
    if (!Watch(serve, s, kQuiet, o.quiet_s, r == 0)) return false;
    phase.store(-1);
    bench::HostileTraffic hostile(port, o.mix);
    hostile.Start();
    std::this_thread::sleep_for(std::chrono::seconds(1));  // The stalled connections pile up first.
    phase.store(kHostile);
    bool alive = Watch(serve, s, kHostile, o.hostile_s);
    phase.store(-1);
    std::printf("round %d: %ld stalled and slow connections open at the end of the hostile phase; load average %s\n", r + 1,
                hostile.open_persistent(), bench::LoadAverage().c_str());
    std::fflush(stdout);
    hostile.Stop();
    for (const auto& [what, n] : hostile.Counts()) answered[what] += n;
    if (!alive) return false;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // The hostile connections' ends settle.
  }
  return true;
}

bool Healthy(int port) {
  bench::RawHttpClient c("127.0.0.1", port);
  return c.Send("GET", "/healthz", "") == 200;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) return 2;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;  // The server inherits it: its own cap must be what limits it.
  setrlimit(RLIMIT_NOFILE, &files);
  std::string base = o.dir + "/topofit-hostile-" + std::to_string(getpid());
  if (bench::WriteScaleSnapshot(base + ".json", o.nodes, 0) < 0) return std::fprintf(stderr, "cannot write %s.json\n", base.c_str()), 1;
  testing::TopofitProcess serve(o.topofit, bench::ServeArgs({"--snapshot", base + ".json"}), base + ".log");
  int port = serve.WaitForLoggedPort("listen", std::chrono::seconds(120));
  std::remove((base + ".json").c_str());
  if (port == 0) return std::fprintf(stderr, "topofit serve did not start:\n%s\n", serve.log().c_str()), 1;
  std::printf("hostile_load: %d idle nodes x 8 GPUs; good client %.0f pods/s (filter + prioritize); %d rounds of %.0f s quiet, "
              "%.0f s hostile; hostile: %d stalled, %d slow (1 byte / %.1f s), %.0f garbage/s, %.0f huge heads/s, %.0f bombs/s, "
              "%.0f explains/s, reconnects %.0f/s; server pid %d; load average %s\n",
              o.nodes, o.rate, o.rounds, o.quiet_s, o.hostile_s, o.mix.stalled, o.mix.slow, o.mix.slow_byte_s, o.mix.garbage_per_s,
              o.mix.huge_per_s, o.mix.bomb_per_s, o.mix.explain_per_s, o.mix.reconnect_per_s, int(serve.pid()), bench::LoadAverage().c_str());
  std::fflush(stdout);

  Samples s;
  std::atomic<int> phase{-1};
  std::atomic<bool> stop{false};
  std::thread good([&] { GoodClient(port, o, s, phase).Run(stop); });
  std::map<std::string, long> answered;
  bool alive = RunRounds(o, port, serve, s, phase, answered);
  stop.store(true);
  good.join();

  bool p99_within = PrintLatency(s, o);
  double rss_ratio = PrintRss(s, serve.pid());
  PrintHostile(answered);
  alive = alive && !serve.Exited() && Healthy(port);
  std::printf("server: %s; load average at the end %s\n", alive ? "the same process, /healthz 200" : "EXITED or not answering",
              bench::LoadAverage().c_str());
  bool pass = alive && s.errors[kQuiet] + s.errors[kHostile] == 0 && p99_within && rss_ratio <= o.max_rss_ratio;
  std::printf("%s (bounds: no error; p99 within %.2fx of quiet or %.0f ms; RSS within %.2fx)\n", pass ? "PASS" : "FAIL",
              o.max_p99_ratio, o.p99_floor_ms, o.max_rss_ratio);
  return pass ? 0 : 1;
}
