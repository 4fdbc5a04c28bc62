// YamlToJson on yaml-cpp's events: the same JSON as a walk of YAML::Load's tree (the converter it
// replaced, kept as the oracle: testing/yaml_tree_oracle.h) on ordinary documents, and bounded work
// on hostile ones - alias bombs, aliases inside their own anchor, deep nesting, a deadline that
// passes. Both read scalars by yaml_scalar.h, which yaml_scalar_test.cc checks on its own.
#include "extender/k8s/yaml_to_json.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "base/json_writer.h"
#include "base/work_deadline.h"
#include "extender/k8s/demo_cluster.h"
#include "extender/k8s/testing/yaml_tree_oracle.h"

namespace topofit::k8s {
namespace {

// Nine levels, each a list of nine references to the one before: 9^9 strings once expanded.
std::string BillionLaughs(int levels = 9) {
  std::string s = "a0: &a0 [lol]\n";
  for (int i = 1; i < levels; ++i) {
    s += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 9; ++j) s += (j ? ",*a" : "*a") + std::to_string(i - 1);
    s += "]\n";
  }
  return s;
}

}  // namespace

TEST_CASE("yaml to json: the same JSON as YAML::Load's tree on ordinary documents") {
  const std::string docs[] = {
      std::string(DemoClusterYaml()),
      "a: 1\nb: '1'\nc: true\nd: ~\ne: 1e3\nf: 0x10\ng: |\n  x\n  y\n",
      "base: &b {x: 1, y: [a, b]}\nc: *b\nd: [*b, *b]\n",
      "x: &k key\n*k : 2\ny: *k\n",
      "&k key: &v value\nother: *v\nthird: *k\n",
      "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
      "a: &n\nb: *n\nc: &m ~\nd: [*m, *n]\n",
      "a: !!str 1\nb: !custom x\nc: !!int '7'\n",
      "[a, {b: c}, [1, 2.5, -3], ~, '', \"q\\x01<>&\", True, FALSE, Null, 01, -0, 1.]",
      "a: 1\n---\nb: 2\n",
      "a: 1\na: 2\n",
      "- name: x\n  items:\n  - {k: v}\n  - [1, [2, [3]]]\n- plain text with: colon\n",
      "a: \"<&>\\t\\u00e9\"\nb: >\n  folded\n  text\n",
      "{a, b: , c}",
      "anchor: &unused 5\nagain: &unused 6\nuse: *unused\n",
  };
  for (const std::string& doc : docs) {
    CAPTURE(doc);
    auto got = YamlToJson(doc);
    auto want = testing::YamlTreeToJson(doc);
    REQUIRE_MESSAGE(got.ok(), (got.ok() ? "" : got.error()));
    REQUIRE(want.ok());
    CHECK(*got == *want);
  }
  CHECK(*YamlToJson("") == "null");
  CHECK(*YamlToJson("# only a comment\n") == "null");
  CHECK(*YamlToJson("base: &b {x: 1}\nd: [*b, *b]\n") == R"({"base":{"x":1},"d":[{"x":1},{"x":1}]})");
  CHECK(*YamlToJson("[a, {b: c}, [1, 2.5, -3], ~, '', \"q\", True, FALSE, Null, 01, -0, 1., !!str 7, '8']") ==
        R"(["a",{"b":"c"},[1,2.5,-3],null,"","q",true,false,null,"01",-0,"1.","7","8"])");
}

TEST_CASE("yaml to json: what neither converter accepts") {
  std::string deep(250, '[');
  const std::string bad[] = {"a: [\n", "? [a]\n: b\n", "~: 1\n", "a: *nowhere\n", "? &s [x]\n: 1\n*s : 2\n", deep};
  for (const std::string& doc : bad) {
    CAPTURE(doc);
    CHECK_FALSE(YamlToJson(doc).ok());
  }
  auto deep_error = YamlToJson(std::string(250, '[') + std::string(250, ']'));
  REQUIRE_FALSE(deep_error.ok());
  CHECK(deep_error.error().find("nesting too deep") != std::string::npos);
  auto key_error = YamlToJson("a: 1\n? [x]\n: 2\n");
  REQUIRE_FALSE(key_error.ok());
  CHECK(key_error.error() == "invalid YAML: line 2, column 3: mapping keys must be scalars");
}

TEST_CASE("yaml to json: an alias inside the node it names is refused, not followed") {
  for (const char* doc : {"a: &x [1, *x]\n", "a: &x {b: *x}\n", "&x {k: [*x]}\n"}) {
    CAPTURE(doc);
    auto r = YamlToJson(doc);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("an alias inside the node it names") != std::string::npos);
  }
}

TEST_CASE("yaml to json: a billion laughs is refused in milliseconds, with bounded memory") {
  const std::string bomb = BillionLaughs();
  CHECK(bomb.size() < 600);
  // In a child process, whose peak resident set starts at its size at the fork: the growth is what
  // the conversion took at its peak.
  int pipe_fd[2];
  REQUIRE(pipe(pipe_fd) == 0);
  pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    auto start = std::chrono::steady_clock::now();
    auto r = YamlToJson(bomb);
    long long micros = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    getrusage(RUSAGE_SELF, &after);
    long long report[3] = {r.ok() ? 0 : 1, micros, after.ru_maxrss - before.ru_maxrss};
    (void)!write(pipe_fd[1], report, sizeof report);
    _exit(0);
  }
  close(pipe_fd[1]);
  long long report[3] = {0, 0, 0};
  CHECK(read(pipe_fd[0], report, sizeof report) == static_cast<ssize_t>(sizeof report));
  close(pipe_fd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  MESSAGE("billion laughs: refused in ", report[1], " us, peak RSS growth ", report[2], " KiB");
  CHECK(report[0] == 1);                  // Refused.
  CHECK(report[1] < 1'000'000);           // Within a second (milliseconds in a release build).
  CHECK(report[2] < 64 * 1024);           // Under 64 MiB (GBs before).
  auto r = YamlToJson(bomb);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("aliases expand the document by more than 100000 nodes") != std::string::npos);
}

TEST_CASE("yaml to json: aliases within the limits pass, one node past them is refused") {
  // Five levels: a4 holds 9^4 = 6561 strings.
  YamlLimits limits;
  const std::string doc = BillionLaughs(5) + "use: [*a4]\n";
  auto ok = YamlToJson(doc, limits);
  REQUIRE_MESSAGE(ok.ok(), (ok.ok() ? "" : ok.error()));
  CHECK(ok->find("\"use\":[[[[[[\"lol\"") != std::string::npos);
  // The nodes aliases add: each a_i repeats a_(i-1) nine times, `use` repeats a4 once.
  size_t nodes = 2, added = 0;  // a0: the list and its string.
  for (int i = 1; i <= 4; ++i) {
    added += 9 * nodes;
    nodes = 1 + 9 * nodes;
  }
  added += nodes;
  limits.max_alias_nodes = added;
  CHECK(YamlToJson(doc, limits).ok());
  limits.max_alias_nodes = added - 1;
  auto refused = YamlToJson(doc, limits);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("line 6") != std::string::npos);  // At the alias that crossed it.
  limits = {};
  limits.max_alias_bytes = 1000;
  auto bytes = YamlToJson(doc, limits);
  REQUIRE_FALSE(bytes.ok());
  CHECK(bytes.error().find("by more than 1000 bytes") != std::string::npos);
}

TEST_CASE("yaml to json: stops when the request's deadline passes or the server stops") {
  std::string big = "items:\n";
  for (int i = 0; i < 20000; ++i) big += "- {name: n" + std::to_string(i) + ", gpus: 8}\n";
  CHECK(YamlToJson(big).ok());
  std::atomic<bool> cancelled{true};
  {
    WorkDeadline d(WorkDeadline::Clock::now() + std::chrono::hours(1), &cancelled);
    auto r = YamlToJson(big);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == WorkDeadline::kCancelled);
  }
  {
    WorkDeadline d(WorkDeadline::Clock::now(), nullptr);
    auto r = YamlToJson(big);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == WorkDeadline::kPassed);
  }
}

}  // namespace topofit::k8s
