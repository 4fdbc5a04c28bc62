// Malformed requests: a clear error in the verb's own shape, the model untouched, the server alive.
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "extender/server/server_test_util.h"

namespace topofit::server {
using nlohmann::json;
using testing::GpuPod;
using testing::LiveServer;

TEST_CASE("malformed filter and bind bodies: 200 with Error") {
  LiveServer srv;
  int free_before = srv.app->model().Totals().free_gpus;
  const char* bodies[] = {
      "not json",
      "{",
      "[1,2,3]",
      R"({"NodeNames":["a100-1"]})",                                     // missing Pod
      R"({"Pod":null,"NodeNames":["a100-1"]})",
      R"({"Pod":"x","NodeNames":["a100-1"]})",                           // wrong type
      R"({"Pod":{},"NodeNames":"a100-1"})",
      R"({"Pod":{},"NodeNames":[7]})",
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"0.5"}}}]}},"NodeNames":["a100-1"]})",
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"-2"}}}]}},"NodeNames":["a100-1"]})",
      R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"500m"}}}]}},"NodeNames":["a100-1"]})",
  };
  for (const char* body : bodies) {
    CAPTURE(body);
    auto res = srv.Post("/scheduler/filter", body);
    REQUIRE(res);
    CHECK(res->status == 200);
    json j = json::parse(res->body);
    CHECK_FALSE(j["Error"].get<std::string>().empty());
    CHECK(j["NodeNames"].is_null());
    CHECK(j["FailedNodes"].is_null());
  }
  for (const char* body : {"nope", R"({"PodName":"x"})", R"({"PodName":3,"Node":"a100-1"})", "{}"}) {
    CAPTURE(body);
    auto res = srv.Post("/scheduler/bind", body);
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK_FALSE(json::parse(res->body)["Error"].get<std::string>().empty());
  }
  CHECK(srv.app->model().Totals().free_gpus == free_before);
}

TEST_CASE("malformed prioritize and preempt bodies: 400 with a JSON error") {
  LiveServer srv;
  for (const char* verb : {"/scheduler/prioritize", "/scheduler/preempt"}) {
    for (const char* body : {"not json", R"({"NodeNames":["a"]})", R"({"Pod":[]})",
                             R"({"Pod":{"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1.5"}}}]}}})"}) {
      CAPTURE(verb);
      CAPTURE(body);
      auto res = srv.Post(verb, body);
      REQUIRE(res);
      CHECK(res->status == 400);
      CHECK_FALSE(json::parse(res->body)["error"].get<std::string>().empty());
    }
  }
  auto res = srv.Post("/scheduler/preempt", R"({"Pod":{},"NodeNameToMetaVictims":{"a100-1":{"Pods":[{"UID":5}]}}})");
  REQUIRE(res);
  CHECK(res->status == 400);
}

TEST_CASE("bodies over the limit: Error for filter and bind, 413 JSON otherwise") {
  ServeConfig cfg;
  cfg.server.max_body_bytes = 1024;
  LiveServer srv(cfg);
  std::string big = R"({"Pod":)" + GpuPod("x", 1) + R"(,"NodeNames":[)";
  for (int i = 0; i < 200; ++i) big += (i ? ",\"n" : "\"n") + std::to_string(i) + "\"";
  big += "]}";
  auto f = srv.Post("/scheduler/filter", big);
  REQUIRE(f);
  CHECK(f->status == 200);
  CHECK(json::parse(f->body)["Error"].get<std::string>().find("exceeds the limit") != std::string::npos);
  auto b = srv.Post("/scheduler/bind", big);
  REQUIRE(b);
  CHECK(b->status == 200);
  CHECK(json::parse(b->body)["Error"].get<std::string>().find("exceeds") != std::string::npos);
  // Chunked (no Content-Length): refused once past the limit.
  auto chunked = srv.client->Post(
      "/scheduler/filter",
      [&big](size_t, httplib::DataSink& sink) {
        sink.write(big.data(), big.size());
        sink.done();
        return true;
      },
      "application/json");
  REQUIRE(chunked);
  CHECK(chunked->status == 200);
  CHECK(json::parse(chunked->body)["Error"].get<std::string>() ==
        "request body exceeds the limit of 1024 bytes (--max-body-bytes)");
  for (const char* path : {"/scheduler/prioritize", "/scheduler/prioritize-pods-without-gpus"}) {
    auto p = srv.Post(path, big);
    REQUIRE(p);
    CHECK(p->status == 413);
    CHECK(json::parse(p->body)["error"].get<std::string>().find("exceeds") != std::string::npos);
  }
  // Still serving.
  auto ok = srv.client->Get("/healthz");
  REQUIRE(ok);
  CHECK(ok->status == 200);
}

TEST_CASE("unknown paths: 404 JSON") {
  LiveServer srv;
  auto res = srv.client->Get("/nope");
  REQUIRE(res);
  CHECK(res->status == 404);
  CHECK(json::parse(res->body).contains("error"));
  auto node = srv.client->Get("/api/v1/nodes/no-such-node");
  REQUIRE(node);
  CHECK(node->status == 404);
}

}  // namespace topofit::server
