#include "extender/groups/group_spec.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/strings.h"

namespace topofit::groups {

std::string_view ToString(LevelPolicy policy) {
  return policy == LevelPolicy::kRequired ? "required" : "preferred";
}

namespace {

const std::string* Get(const std::map<std::string, std::string>& a, const char* key) {
  auto it = a.find(key);
  return it == a.end() ? nullptr : &it->second;
}

std::optional<int> WholeNumber(std::string_view text, int lo, int hi) {
  text = Trim(text);
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

std::string LevelChoices(const DomainLevels& levels) {
  std::vector<std::string> names;
  for (const DomainLevel& l : levels.levels) names.push_back(l.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// The level and policy annotations, into `out`; errors appended.
void ParseLevel(const std::map<std::string, std::string>& a, const DomainLevels& levels, int* level,
                LevelPolicy* policy, std::vector<std::string>* errors) {
  *level = levels.size() - 1;
  if (const std::string* v = Get(a, kGroupLevelAnnotation)) {
    int found = levels.Find(Trim(*v));
    if (found < 0) {
      errors->push_back(fmt::format("invalid {} '{}': expected a level ({}) or one of their label keys",
                                    kGroupLevelAnnotation, *v, LevelChoices(levels)));
    } else {
      *level = found;
    }
  }
  if (const std::string* v = Get(a, kGroupPolicyAnnotation)) {
    std::string p = AsciiLower(Trim(*v));
    if (p == "required") {
      *policy = LevelPolicy::kRequired;
    } else if (p == "preferred") {
      *policy = LevelPolicy::kPreferred;
    } else {
      errors->push_back(fmt::format("invalid {} '{}': expected required or preferred", kGroupPolicyAnnotation, *v));
    }
  }
}

// The annotation `key` as a member count 1..kMaxGroupSize; nullopt when it is absent or invalid (then
// an error is added).
std::optional<int> GroupCount(const std::map<std::string, std::string>& a, const char* key,
                              std::vector<std::string>* errors) {
  const std::string* v = Get(a, key);
  if (!v) return std::nullopt;
  if (auto n = WholeNumber(*v, 1, kMaxGroupSize)) return n;
  errors->push_back(fmt::format("invalid {} '{}': expected a whole number 1..{}", key, *v, kMaxGroupSize));
  return std::nullopt;
}

Status Joined(const std::vector<std::string>& errors) {
  if (errors.empty()) return Status::Ok();
  return Error{fmt::format("{}", fmt::join(errors, "; "))};
}

}  // namespace

Result<std::optional<GroupAnnotations>> ParseGroupAnnotations(const std::map<std::string, std::string>& a,
                                                              const DomainLevels& levels) {
  const std::string* name = Get(a, kGroupAnnotation);
  const char* others[] = {kGroupSizeAnnotation, kGroupMinCountAnnotation, kGroupLevelAnnotation,
                          kGroupPolicyAnnotation};
  if (!name) {
    for (const char* k : others) {
      if (Get(a, k)) return Error{fmt::format("{} without {}: the pod names no group", k, kGroupAnnotation)};
    }
    return std::optional<GroupAnnotations>();
  }
  GroupAnnotations g;
  std::vector<std::string> errors;
  g.name = std::string(Trim(*name));
  if (g.name.empty()) errors.push_back(fmt::format("invalid {} '{}': expected a group name", kGroupAnnotation, *name));
  if (auto size = GroupCount(a, kGroupSizeAnnotation, &errors)) g.size = *size;
  g.min_count = GroupCount(a, kGroupMinCountAnnotation, &errors);
  if (g.min_count && *g.min_count > g.size) {
    errors.push_back(fmt::format("invalid {} '{}': more than the group's size {}", kGroupMinCountAnnotation,
                                 *g.min_count, g.size));
  }
  ParseLevel(a, levels, &g.level, &g.policy, &errors);
  if (Status s = Joined(errors); !s.ok()) return Error{s.error()};
  return std::optional<GroupAnnotations>(std::move(g));
}

Result<std::optional<GroupSpec>> GroupFromAnnotations(const cluster::PodRequest& member,
                                                      const std::map<std::string, std::string>& annotations,
                                                      const DomainLevels& levels) {
  auto parsed = ParseGroupAnnotations(annotations, levels);
  if (!parsed.ok()) return Error{parsed.error()};
  if (!parsed->has_value()) return std::optional<GroupSpec>();
  if (!member.error.empty()) return Error{member.error};
  const GroupAnnotations& g = **parsed;
  GroupSpec spec;
  spec.namespace_ = member.namespace_;
  spec.name = g.name;
  spec.size = g.size;
  spec.min_count = g.min_count.value_or(g.size);
  spec.gpus = member.gpus;
  spec.intent = member.intent;
  spec.priority = member.priority;
  spec.level = g.level;
  spec.policy = g.policy;
  return std::optional<GroupSpec>(std::move(spec));
}

namespace {

std::string_view MinField(const k8s::PodGroupObject& g) {
  return g.api == k8s::PodGroupObject::Api::kWorkload ? "spec.schedulingPolicy.gang.minCount" : "spec.minMember";
}

// The group annotations a PodGroup's member may not carry: another group's name, and the members (the
// PodGroup states them). Errors appended.
void CheckPodGroupAnnotations(const std::map<std::string, std::string>& a, const k8s::PodGroupObject& group,
                              std::vector<std::string>* errors) {
  if (const std::string* v = Get(a, kGroupAnnotation); v && Trim(*v) != group.name) {
    errors->push_back(fmt::format("{} '{}' names another group than the pod's PodGroup {}", kGroupAnnotation, *v,
                                  group.key()));
  }
  for (const char* k : {kGroupSizeAnnotation, kGroupMinCountAnnotation}) {
    if (Get(a, k)) {
      errors->push_back(fmt::format("{}: the pod's PodGroup {} states its members ({}); remove the annotation", k,
                                    group.key(), MinField(group)));
    }
  }
}

// Without topofit.io/group-level: the PodGroup's topology key is the level, required unless
// topofit.io/group-policy says otherwise.
void TopologyLevel(const std::map<std::string, std::string>& a, const k8s::PodGroupObject& group,
                   const DomainLevels& levels, GroupSpec* spec, std::vector<std::string>* errors) {
  if (group.topology_key.empty() || Get(a, kGroupLevelAnnotation)) return;
  const int found = levels.Find(group.topology_key);
  if (found < 0) {
    errors->push_back(fmt::format("PodGroup {}: spec.schedulingConstraints.topology key '{}' is the label of no "
                                  "level ({}); name one in the groupLevels setting",
                                  group.key(), group.topology_key, LevelChoices(levels)));
    return;
  }
  spec->level = found;
  if (!Get(a, kGroupPolicyAnnotation)) spec->policy = LevelPolicy::kRequired;
}

}  // namespace

Result<GroupSpec> GroupFromPodGroup(const cluster::PodRequest& member, const k8s::WorkloadGroupRef& ref,
                                    const k8s::PodGroupObject& group, int members_seen,
                                    const std::map<std::string, std::string>& annotations,
                                    const DomainLevels& levels) {
  using PodGroup = k8s::PodGroupObject;
  const std::string& named = group.api == PodGroup::Api::kWorkload ? ref.pod_group_name : ref.coscheduling_pod_group;
  if (named.empty() || named != group.name || group.namespace_ != member.namespace_) {
    return Error{fmt::format("pod {} does not name PodGroup {}", member.key(), group.key())};
  }
  const bool gang = group.policy == PodGroup::Policy::kGang;
  if (gang && (group.min_count < 1 || group.min_count > kMaxGroupSize)) {
    return Error{fmt::format("PodGroup {}: {} {} is not 1..{}", group.key(), MinField(group), group.min_count,
                             kMaxGroupSize)};
  }
  if (!member.error.empty()) return Error{member.error};
  std::vector<std::string> errors;
  GroupSpec spec;
  CheckPodGroupAnnotations(annotations, group, &errors);
  ParseLevel(annotations, levels, &spec.level, &spec.policy, &errors);
  TopologyLevel(annotations, group, levels, &spec, &errors);
  if (Status s = Joined(errors); !s.ok()) return Error{s.error()};
  spec.namespace_ = group.namespace_;
  spec.name = group.name;
  spec.min_count = gang ? group.min_count : 1;
  spec.size = std::clamp(std::max(spec.min_count, members_seen), 1, kMaxGroupSize);
  spec.min_count = std::min(spec.min_count, spec.size);
  spec.gpus = member.gpus;
  spec.intent = member.intent;
  spec.priority = group.priority.value_or(member.priority);
  return spec;
}

}  // namespace topofit::groups
