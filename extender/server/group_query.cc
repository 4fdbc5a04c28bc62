// QueryApi's groups: GET /api/v1/groups and explain's "group" for a member pod (query_api.h).
#include <nlohmann/json.hpp>

#include "extender/server/query_api.h"

namespace topofit::server {
namespace {

using nlohmann::json;

json SpecJson(const std::optional<groups::GroupSpec>& spec, const groups::DomainLevels& levels) {
  if (!spec) return nullptr;
  return {{"size", spec->size},
          {"minCount", spec->min_count},
          {"gpus", spec->gpus},
          {"level", spec->level >= 0 && spec->level < levels.size() ? levels.levels[spec->level].name : ""},
          {"policy", std::string(groups::ToString(spec->policy))}};
}

json StatusJson(const groups::GroupStatus& g, const groups::DomainLevels& levels) {
  const auto slash = g.key.find('/');
  return {{"namespace", g.key.substr(0, slash)},
          {"name", slash == std::string::npos ? g.key : g.key.substr(slash + 1)},
          {"spec", SpecJson(g.spec, levels)},
          {"membersSeen", g.members_seen},
          {"membersBound", g.members_bound},
          {"state", std::string(groups::ToString(g.state))},
          {"domain", g.domain},
          {"reason", g.reason},
          {"notes", g.notes},
          {"preempting", g.preempting},
          {"waitingSeconds", g.waiting_seconds}};
}

}  // namespace

Reply QueryApi::Groups() const {
  json items = json::array();
  if (groups_) {
    for (const groups::GroupStatus& g : groups_->Groups()) items.push_back(StatusJson(g, groups_->lookup().levels()));
  }
  return Reply{200, json{{"groups", items}}.dump()};
}

json QueryApi::GroupExplain(const cluster::PodRequest& pod) const {
  if (!groups_) return nullptr;
  auto e = groups_->Explain(pod);
  if (!e) return nullptr;
  json domains = json::array();
  for (const groups::DomainVerdict& d : e->domains)
    domains.push_back({{"domain", d.domain}, {"room", d.room}, {"freeGpus", d.free_gpus}, {"fits", d.fits}});
  json plan = json::array();
  for (const groups::MemberPlan& m : e->plan) plan.push_back({{"node", m.node_name}, {"gpus", m.gpus.Indices()}});
  json out = StatusJson(e->status, groups_->lookup().levels());
  out["level"] = e->level;
  out["domains"] = domains;
  out["plan"] = plan;
  out["slotNode"] = e->slot_node;
  return out;
}

}  // namespace topofit::server
