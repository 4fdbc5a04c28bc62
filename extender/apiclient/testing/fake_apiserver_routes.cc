// The HTTP routes of FakeApiServer: list, watch, pod get/patch and binding.
#include <httplib.h>

#include <chrono>

#include "extender/apiclient/testing/fake_apiserver.h"

namespace topofit::apiclient::testing {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

json Status(int code, const std::string& reason, const std::string& message) {
  return {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
          {"reason", reason}, {"code", code}, {"message", message}};
}

void Reply(httplib::Response& res, int code, const json& body) {
  res.status = code;
  res.set_content(body.dump(), "application/json");
}

bool Terminated(const json& pod) {
  const json* status = pod.contains("status") ? &pod["status"] : nullptr;
  std::string phase = status && status->contains("phase") ? (*status)["phase"].get<std::string>() : "";
  return phase == "Succeeded" || phase == "Failed";
}

void MergePatch(json& target, const json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) target = json::object();
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    if (it->is_null()) target.erase(it.key());
    else MergePatch(target[it.key()], *it);
  }
}

}  // namespace

void FakeApiServer::ServeList(const void* request, void* response, const std::string& kind) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  auto& res = *static_cast<httplib::Response*>(response);
  bool selector = req.has_param("fieldSelector");
  size_t limit = req.has_param("limit") ? std::stoul(req.get_param_value("limit")) : 0;
  size_t offset = req.has_param("continue") ? std::stoul(req.get_param_value("continue")) : 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto& c = kinds_[kind];
  ++c.lists;
  if (limit == 0) ++unpaged_lists_;
  if (offset > 0 && expire_next_continue_) {
    expire_next_continue_ = false;
    Reply(res, 410, Status(410, "Expired",
                           "The provided continue parameter is too old to display a consistent list result. "
                           "You can start a new list without the continue parameter."));
    return;
  }
  json items = json::array();
  for (const auto& [key, object] : c.items) {
    if (selector && kind == "pods" && Terminated(object)) continue;
    items.push_back(object);
  }
  json page = json::array();
  for (size_t i = offset; i < items.size() && (limit == 0 || page.size() < limit); ++i) page.push_back(items[i]);
  json meta = {{"resourceVersion", std::to_string(rv_)}};
  if (limit && offset + page.size() < items.size()) meta["continue"] = std::to_string(offset + page.size());
  Reply(res, 200, {{"kind", kind == "nodes" ? "NodeList" : "PodList"}, {"apiVersion", "v1"},
                   {"metadata", meta}, {"items", page}});
}

void FakeApiServer::ServeWatch(const void* request, void* response, const std::string& kind) {
  const auto& req = *static_cast<const httplib::Request*>(request);
  auto& res = *static_cast<httplib::Response*>(response);
  struct State {
    int64_t from;
    int drop_gen, compact_gen;
    Clock::time_point deadline, last_bookmark;
    bool selector, bookmarks;
  };
  auto st = std::make_shared<State>();
  st->from = std::stoll(req.get_param_value("resourceVersion"));
  int timeout = req.has_param("timeoutSeconds") ? std::stoi(req.get_param_value("timeoutSeconds")) : 30;
  st->deadline = Clock::now() + std::chrono::seconds(timeout);
  st->last_bookmark = Clock::now();
  st->selector = req.has_param("fieldSelector");
  st->bookmarks = req.get_param_value("allowWatchBookmarks") == "true";
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++kinds_[kind].watches;
    if (next_watch_gone_) {
      next_watch_gone_ = false;
      Reply(res, 410, Status(410, "Expired", "too old resource version"));
      return;
    }
    st->drop_gen = drop_generation_;
    st->compact_gen = compact_generation_;
  }
  res.set_chunked_content_provider("application/json", [this, st, kind](size_t, httplib::DataSink& sink) {
    std::string out;
    bool finish = false;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto pending = [&] {
        for (auto it = events_.rbegin(); it != events_.rend() && it->rv > st->from; ++it)
          if (it->kind == kind) return true;
        return false;
      };
      cv_.wait_for(lock, std::chrono::milliseconds(50), [&] {
        return stopping_ || drop_generation_ != st->drop_gen || compact_generation_ != st->compact_gen ||
               pending();
      });
      if (stopping_) {
        finish = true;
      } else if (drop_generation_ != st->drop_gen) {
        return false;  // Abort: the connection closes without the last chunk.
      } else if (compact_generation_ != st->compact_gen || st->from < compacted_rv_) {
        out = json({{"type", "ERROR"}, {"object", Status(410, "Expired", "too old resource version")}}).dump() + "\n";
        finish = true;
      } else {
        for (const auto& ev : events_) {
          if (ev.rv <= st->from || ev.kind != kind) continue;
          std::string type = ev.type;
          if (st->selector && kind == "pods" && type == "MODIFIED" && Terminated(ev.object)) type = "DELETED";
          out += json({{"type", type}, {"object", ev.object}}).dump() + "\n";
          st->from = ev.rv;
        }
        auto now = Clock::now();
        if (out.empty() && st->bookmarks && now - st->last_bookmark > std::chrono::milliseconds(100)) {
          st->from = std::max(st->from, rv_);
          json bm = {{"type", "BOOKMARK"},
                     {"object", {{"kind", kind == "nodes" ? "Node" : "Pod"}, {"apiVersion", "v1"},
                                 {"metadata", {{"resourceVersion", std::to_string(st->from)}}}}}};
          out = bm.dump() + "\n";
          st->last_bookmark = now;
        }
        if (now >= st->deadline) finish = true;
      }
    }
    if (!sink.is_writable()) return false;
    // Split each write in two so that the client sees lines cut across chunks.
    size_t half = out.size() / 2;
    if (half && !sink.write(out.data(), half)) return false;
    if (out.size() > half && !sink.write(out.data() + half, out.size() - half)) return false;
    if (finish) {
      std::lock_guard<std::mutex> lock(chunk_end_mu_);
      sink.done();
    }
    return true;
  });
}

void FakeApiServer::Setup() {
  auto& s = *server_;
  auto collection = [this](const httplib::Request& req, httplib::Response& res, const std::string& kind) {
    if (!Authorized(&req)) return Reply(res, 401, Status(401, "Unauthorized", "Unauthorized"));
    if (kind == kCoschedulingPodGroups && !coscheduling_served_.load()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++kinds_[kind].lists;  // Asked, and answered 404.
      return Reply(res, 404, Status(404, "NotFound", "the server could not find the requested resource"));
    }
    std::string w = req.get_param_value("watch");
    if (w == "1" || w == "true") ServeWatch(&req, &res, kind);
    else ServeList(&req, &res, kind);
  };
  s.Get(R"(/api/v1/(nodes|pods))", [collection](const httplib::Request& req, httplib::Response& res) {
    collection(req, res, req.matches[1]);
  });
  s.Get("/apis/scheduling.k8s.io/v1alpha2/podgroups", [collection](const httplib::Request& req, httplib::Response& res) {
    collection(req, res, kWorkloadPodGroups);
  });
  s.Get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups", [collection](const httplib::Request& req, httplib::Response& res) {
    collection(req, res, kCoschedulingPodGroups);
  });
  // DRA's kinds (docs/dra.md), listed and watched as nodes and pods are.
  s.Get(R"(/apis/resource\.k8s\.io/v1/(deviceclasses|resourceslices|resourceclaims))",
        [this](const httplib::Request& req, httplib::Response& res) {
          if (!Authorized(&req)) return Reply(res, 401, Status(401, "Unauthorized", "Unauthorized"));
          std::string kind = req.matches[1];
          std::string w = req.get_param_value("watch");
          if (w == "1" || w == "true") ServeWatch(&req, &res, kind);
          else ServeList(&req, &res, kind);
        });
  const char* pod_path = R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))";
  s.Get(pod_path, [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(&req)) return Reply(res, 401, Status(401, "Unauthorized", "Unauthorized"));
    json pod = Get("pods", std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
    if (pod.is_null()) return Reply(res, 404, Status(404, "NotFound", "pods \"" + std::string(req.matches[2]) + "\" not found"));
    Reply(res, 200, pod);
  });
  s.Patch(pod_path, [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(&req)) return Reply(res, 401, Status(401, "Unauthorized", "Unauthorized"));
    if (req.get_header_value("Content-Type") != "application/merge-patch+json")
      return Reply(res, 415, Status(415, "UnsupportedMediaType", "unsupported patch type"));
    std::string key = std::string(req.matches[1]) + "/" + std::string(req.matches[2]);
    json patch = json::parse(req.body);
    std::lock_guard<std::mutex> lock(mu_);
    ++pod_patches_;
    auto& items = kinds_["pods"].items;
    auto it = items.find(key);
    if (it == items.end()) return Reply(res, 404, Status(404, "NotFound", "pods \"" + std::string(req.matches[2]) + "\" not found"));
    json pod = it->second;
    if (patch.contains("metadata") && patch["metadata"].contains("uid") &&
        patch["metadata"]["uid"] != pod["metadata"]["uid"])
      return Reply(res, 409, Status(409, "Conflict", "Precondition failed: UID in precondition does not match"));
    MergePatch(pod, patch);
    Emit("pods", "MODIFIED", pod);
    Reply(res, 200, kinds_["pods"].items[key]);
  });
  s.Post(std::string(pod_path) + "/binding", [this](const httplib::Request& req, httplib::Response& res) {
    if (!Authorized(&req)) return Reply(res, 401, Status(401, "Unauthorized", "Unauthorized"));
    std::string name = req.matches[2];
    std::string key = std::string(req.matches[1]) + "/" + name;
    json binding = json::parse(req.body);
    std::lock_guard<std::mutex> lock(mu_);
    ++bindings_;
    if (fail_binding_status_) {
      int code = fail_binding_status_;
      fail_binding_status_ = 0;
      return Reply(res, code, Status(code, "InternalError", fail_binding_message_));
    }
    auto& items = kinds_["pods"].items;
    auto it = items.find(key);
    if (it == items.end()) return Reply(res, 404, Status(404, "NotFound", "pods \"" + name + "\" not found"));
    json pod = it->second;
    if (binding["target"].value("kind", "") != "Node" || binding["metadata"].value("name", "") != name)
      return Reply(res, 400, Status(400, "BadRequest", "bad binding"));
    // As kube-apiserver's BindingREST: the binding's uid is a precondition, then nodeName is set and the
    // binding's annotations are merged into the pod's, in one update.
    if (binding["metadata"].contains("uid") && binding["metadata"]["uid"] != pod["metadata"]["uid"])
      return Reply(res, 409, Status(409, "Conflict", "Precondition failed: UID in precondition: " +
                                                         binding["metadata"]["uid"].get<std::string>() +
                                                         ", UID in object meta: " +
                                                         pod["metadata"].value("uid", std::string())));
    if (pod["spec"].contains("nodeName"))
      return Reply(res, 409, Status(409, "Conflict", "Operation cannot be fulfilled on pods/binding \"" + name +
                                                         "\": pod " + name + " is already assigned to node \"" +
                                                         pod["spec"]["nodeName"].get<std::string>() + "\""));
    pod["spec"]["nodeName"] = binding["target"]["name"];
    if (binding["metadata"].contains("annotations"))
      for (const auto& [k, v] : binding["metadata"]["annotations"].items()) pod["metadata"]["annotations"][k] = v;
    Emit("pods", "MODIFIED", pod);
    Reply(res, 201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Success"}, {"code", 201}});
  });
}

}  // namespace topofit::apiclient::testing
