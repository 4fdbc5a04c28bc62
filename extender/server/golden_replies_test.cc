// The replies of the server, byte for byte: testdata/demo-replies.jsonl holds a fixed sequence of
// requests against the embedded demo cluster (filter, prioritize, bind, preempt, refused bodies, the
// query API) and what `topofit serve` answered; record_replies.py beside it regenerates the file
// when a reply is meant to change. A refactoring must leave every reply as it was.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "base/files.h"
#include "extender/server/server_test_util.h"

namespace topofit::server {
namespace {

TEST_CASE("golden: the server answers the recorded requests with the recorded bytes") {
  auto text = ReadFile(std::string(TOPOFIT_SOURCE_DIR) + "/extender/server/testdata/demo-replies.jsonl");
  REQUIRE(text.ok());
  testing::LiveServer srv;
  int checked = 0;
  size_t pos = 0;
  while (pos < text->size()) {
    size_t nl = text->find('\n', pos);
    auto step = nlohmann::json::parse(text->substr(pos, nl - pos));
    pos = nl == std::string::npos ? text->size() : nl + 1;
    const std::string method = step["method"], path = step["path"];
    CAPTURE(method);
    CAPTURE(path);
    httplib::Result res = method == "GET" ? srv.client->Get(path)
                                          : srv.client->Post(path, step["body"].get<std::string>(), "application/json");
    REQUIRE(res);
    CHECK(res->status == step["status"].get<int>());
    CHECK(res->body == step["response"].get<std::string>());
    ++checked;
  }
  CHECK(checked == 38);
}

}  // namespace
}  // namespace topofit::server
