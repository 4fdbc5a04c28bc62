// Single-pass On-Demand decoding of Node and Pod objects.
#include "extender/k8s/object_decoder.h"

#include <climits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "extender/k8s/dra_decoder.h"
#include "extender/k8s/effective_request.h"
#include "extender/k8s/quantity.h"

namespace topofit::k8s {
namespace {

using json::ForEachElement;
using json::ForEachField;
using json::KeyIs;
namespace dom = json::dom;
using json::Path;

}  // namespace

void DecodeMetaValue(dom::element v, const Path& path, ObjectMeta& meta) {
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "name")) meta.name = json::String(value, p);
    else if (KeyIs(key, "namespace")) meta.namespace_ = json::String(value, p);
    else if (KeyIs(key, "uid")) meta.uid = json::String(value, p);
    else if (KeyIs(key, "resourceVersion")) meta.resource_version = json::String(value, p);
    else if (KeyIs(key, "labels")) json::StringMap(value, p, meta.labels);
    else if (KeyIs(key, "annotations")) json::StringMap(value, p, meta.annotations);
    else if (KeyIs(key, "deletionTimestamp")) meta.deleting = !json::IsNull(value);
  });
}

namespace {

struct Resources {
  std::optional<int64_t> gpus, cpu_milli, memory_bytes;
  std::string dra_class;  // The first deviceclass.resource.kubernetes.io/<class> requested, and how many.
  int64_t dra_class_count = 0;
};

// A resource list (requests, limits, allocatable, capacity): only the three resources topofit reads,
// and the first implicit DRA extended resource name.
Resources DecodeResourceList(dom::element v, const Path& path) {
  Resources r;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    bool gpu = key == kGpuResource, cpu = key == "cpu", mem = key == "memory";
    Path p = path.Field(key);
    if (key.starts_with(kDeviceClassResourcePrefix) && r.dra_class.empty()) {
      auto n = ParseWholeCount(json::ScalarText(value, p));
      if (!n) json::Fail(p, n.error());
      r.dra_class = key.substr(std::string_view(kDeviceClassResourcePrefix).size());
      r.dra_class_count = *n;
    }
    if (!gpu && !cpu && !mem) return;
    std::string text = json::ScalarText(value, p);
    auto parsed = gpu ? ParseWholeCount(text) : cpu ? ParseMilli(text) : ParseValue(text);
    if (!parsed) json::Fail(p, parsed.error());
    (gpu ? r.gpus : cpu ? r.cpu_milli : r.memory_bytes) = *parsed;
  });
  return r;
}

ContainerRequest DecodeContainer(dom::element v, const Path& path) {
  Resources requests, limits;
  bool restartable = false;
  std::string name;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "resources")) {
      ForEachField(value, p, [&](std::string_view k, dom::element list) {
        if (KeyIs(k, "requests")) requests = DecodeResourceList(list, p.Field("requests"));
        else if (KeyIs(k, "limits")) limits = DecodeResourceList(list, p.Field("limits"));
      });
    } else if (KeyIs(key, "restartPolicy")) {
      restartable = KeyIs(json::String(value, p), "Always");
    } else if (KeyIs(key, "name")) {
      name = json::String(value, p);
    }
  });
  if (requests.gpus && limits.gpus && *requests.gpus != *limits.gpus) {
    json::Fail(path.Field("resources"),
               fmt::format("{} requests ({}) must equal limits ({})", kGpuResource, *requests.gpus,
                           *limits.gpus));
  }
  // A missing request takes the limit (API defaulting); otherwise zero.
  ContainerRequest c;
  c.gpus = requests.gpus.value_or(limits.gpus.value_or(0));
  c.cpu_milli = requests.cpu_milli.value_or(limits.cpu_milli.value_or(0));
  c.memory_bytes = requests.memory_bytes.value_or(limits.memory_bytes.value_or(0));
  c.restartable = restartable;
  c.name = std::move(name);
  const Resources& dra = requests.dra_class.empty() ? limits : requests;
  c.dra_class = dra.dra_class;
  c.dra_class_count = dra.dra_class_count;
  return c;
}

// The GPU models one required nodeSelectorTerm allows: the values of its `In` expressions on
// nvidia.com/gpu.product (intersected when several); nullopt when the term does not constrain the key.
std::optional<std::set<std::string>> TermProducts(dom::element term, const Path& path) {
  std::optional<std::set<std::string>> out;
  ForEachField(term, path, [&](std::string_view key, dom::element exprs) {
    if (!KeyIs(key, "matchExpressions")) return;
    Path p = path.Field(key);
    ForEachElement(exprs, p, [&](int i, dom::element e) {
      std::string k, op;
      std::set<std::string> values;
      Path pe = p.Index(i);
      ForEachField(e, pe, [&](std::string_view f, dom::element value) {
        if (KeyIs(f, "key")) k = json::String(value, pe.Field(f));
        else if (KeyIs(f, "operator")) op = json::String(value, pe.Field(f));
        else if (KeyIs(f, "values")) ForEachElement(value, pe.Field(f), [&](int j, dom::element s) {
          values.insert(json::String(s, pe.Field(f).Index(j)));
        });
      });
      if (k != kGfdProductLabel || op != "In") return;
      if (!out) {
        out = std::move(values);
      } else {
        std::set<std::string> both;
        for (const auto& x : values)
          if (out->count(x)) both.insert(x);
        out = std::move(both);
      }
    });
  });
  return out;
}

// spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: the union over terms,
// nullopt when any term leaves the GPU model free (or there is no such affinity).
std::optional<std::set<std::string>> AffinityProducts(dom::element affinity, const Path& path) {
  std::optional<std::set<std::string>> out;
  bool unconstrained = false, any_term = false;
  ForEachField(affinity, path, [&](std::string_view key, dom::element na) {
    if (!KeyIs(key, "nodeAffinity")) return;
    Path p = path.Field(key);
    ForEachField(na, p, [&](std::string_view k2, dom::element req) {
      if (!KeyIs(k2, "requiredDuringSchedulingIgnoredDuringExecution")) return;
      Path p2 = p.Field(k2);
      ForEachField(req, p2, [&](std::string_view k3, dom::element terms) {
        if (!KeyIs(k3, "nodeSelectorTerms")) return;
        Path p3 = p2.Field(k3);
        ForEachElement(terms, p3, [&](int i, dom::element term) {
          any_term = true;
          auto t = TermProducts(term, p3.Index(i));
          if (!t) {
            unconstrained = true;
            return;
          }
          if (!out) out.emplace();
          out->insert(t->begin(), t->end());
        });
      });
    });
  });
  if (!any_term || unconstrained) return std::nullopt;
  return out;
}

// pod.class_resource(_count): the first implicit DRA class name any container asks, effective request.
void ClassResource(std::vector<ContainerRequest> containers, std::vector<ContainerRequest> inits, PodObject& pod) {
  pod.class_resource.clear();
  for (const auto* list : {&inits, &containers})
    for (const auto& c : *list)
      if (pod.class_resource.empty()) pod.class_resource = c.dra_class;
  for (auto* list : {&inits, &containers})
    for (auto& c : *list) c.gpus = c.dra_class == pod.class_resource ? c.dra_class_count : 0;
  pod.class_resource_count = pod.class_resource.empty() ? 0 : ComputeEffectiveRequest(containers, inits).gpus;
}

void DecodePodSpec(dom::element v, const Path& path, PodObject& pod) {
  std::vector<ContainerRequest> containers, inits;
  std::optional<std::set<std::string>> selector_products, affinity_products;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "containers") || KeyIs(key, "initContainers")) {
      auto& out = KeyIs(key, "containers") ? containers : inits;
      ForEachElement(value, p, [&](int i, dom::element c) {
        out.push_back(DecodeContainer(c, p.Index(i)));
      });
    } else if (KeyIs(key, "nodeName")) {
      pod.node_name = json::String(value, p);
    } else if (KeyIs(key, "schedulerName")) {
      pod.scheduler_name = json::String(value, p);
    } else if (KeyIs(key, "nodeSelector")) {
      std::map<std::string, std::string> selector;
      json::StringMap(value, p, selector);
      if (auto it = selector.find(kGfdProductLabel); it != selector.end()) selector_products = {{it->second}};
    } else if (KeyIs(key, "affinity") && !json::IsNull(value)) {
      affinity_products = AffinityProducts(value, p);
    } else if (KeyIs(key, "schedulingGroup")) {
      ForEachField(value, p, [&](std::string_view k, dom::element f) {
        if (KeyIs(k, "podGroupName")) pod.group_ref.pod_group_name = json::String(f, p.Field(k));
      });
    } else if (KeyIs(key, "resourceClaims")) {
      DecodePodResourceClaims(value, p, pod);
    } else if (KeyIs(key, "priority")) {
      int64_t prio = json::Int(value, p);
      if (prio < INT32_MIN || prio > INT32_MAX) json::Fail(p, "out of range");
      pod.priority = int32_t(prio);
    } else if (KeyIs(key, "preemptionPolicy")) {
      pod.preempt_never = json::String(value, p) == "Never";
    }
  });
  for (auto& c : containers) c.restartable = false;
  pod.gpu_containers.clear();
  for (const auto& c : inits)
    if (c.gpus > 0) pod.gpu_containers.push_back({c.name, c.gpus, true, c.restartable});
  for (const auto& c : containers)
    if (c.gpus > 0) pod.gpu_containers.push_back({c.name, c.gpus, false, false});
  EffectiveRequest eff = ComputeEffectiveRequest(containers, inits);
  pod.gpus = eff.gpus;
  pod.cpu_milli = eff.cpu_milli;
  pod.memory_bytes = eff.memory_bytes;
  // Both must hold: the intersection when both constrain the model.
  std::optional<std::set<std::string>> products = selector_products;
  if (affinity_products) {
    if (!products) {
      products = affinity_products;
    } else {
      std::set<std::string> both;
      for (const auto& x : *products)
        if (affinity_products->count(x)) both.insert(x);
      products = std::move(both);
    }
  }
  pod.gpu_products.clear();
  if (products) pod.gpu_products.assign(products->begin(), products->end());
  ClassResource(containers, inits, pod);
}

}  // namespace

std::string DescribeObject(std::string_view kind, const ObjectMeta& meta) {
  if (meta.name.empty()) return std::string(kind);
  if (meta.namespace_.empty()) return fmt::format("{} {}", kind, meta.name);
  return fmt::format("{} {}/{}", kind, meta.namespace_, meta.name);
}


NodeObject DecodeNodeValue(dom::element v, const Path& path) {
  NodeObject node;
  if (v.type() != dom::element_type::OBJECT) json::Fail(path, "expected a Node object");
  WithObjectContext("node", node.meta, [&] {
    Resources allocatable, capacity;
    ForEachField(v, path, [&](std::string_view key, dom::element value) {
      Path p = path.Field(key);
      if (KeyIs(key, "metadata")) {
        DecodeMetaValue(value, p, node.meta);
      } else if (KeyIs(key, "spec")) {
        ForEachField(value, p, [&](std::string_view k, dom::element f) {
          if (KeyIs(k, "unschedulable")) node.unschedulable = json::Bool(f, p.Field(k));
        });
      } else if (KeyIs(key, "status")) {
        ForEachField(value, p, [&](std::string_view k, dom::element f) {
          if (KeyIs(k, "allocatable")) allocatable = DecodeResourceList(f, p.Field(k));
          else if (KeyIs(k, "capacity")) capacity = DecodeResourceList(f, p.Field(k));
        });
      }
    });
    node.capacity_gpus = capacity.gpus.value_or(0);
    node.allocatable_gpus = allocatable.gpus.value_or(node.capacity_gpus);
    node.allocatable_cpu_milli = allocatable.cpu_milli.value_or(capacity.cpu_milli.value_or(0));
    node.allocatable_memory_bytes =
        allocatable.memory_bytes.value_or(capacity.memory_bytes.value_or(0));
  });
  return node;
}

PodObject DecodePodValue(dom::element v, const Path& path) {
  PodObject pod;
  std::map<std::string, std::string> claim_statuses;  // status.resourceClaimStatuses: name -> claim.
  if (v.type() != dom::element_type::OBJECT) json::Fail(path, "expected a Pod object");
  WithObjectContext("pod", pod.meta, [&] {
    ForEachField(v, path, [&](std::string_view key, dom::element value) {
      Path p = path.Field(key);
      if (KeyIs(key, "metadata")) {
        DecodeMetaValue(value, p, pod.meta);
      } else if (KeyIs(key, "spec")) {
        DecodePodSpec(value, p, pod);
      } else if (KeyIs(key, "status")) {
        ForEachField(value, p, [&](std::string_view k, dom::element f) {
          if (KeyIs(k, "phase")) pod.phase = json::String(f, p.Field(k));
          else if (KeyIs(k, "nominatedNodeName")) pod.nominated_node = json::String(f, p.Field(k));
          else if (KeyIs(k, "resourceClaimStatuses")) DecodePodClaimStatuses(f, p.Field(k), claim_statuses);
        });
      }
    });
  });
  for (PodClaimRef& ref : pod.resource_claims)
    if (ref.from_template)
      if (auto it = claim_statuses.find(ref.name); it != claim_statuses.end()) ref.claim = it->second;
  if (auto it = pod.meta.labels.find(kCoschedulingPodGroupLabel); it != pod.meta.labels.end())
    pod.group_ref.coscheduling_pod_group = it->second;
  return pod;
}

namespace {

int32_t MemberCount(dom::element v, const Path& path) {
  int64_t n = json::Int(v, path);
  if (n < 0 || n > INT32_MAX) json::Fail(path, fmt::format("{} is out of range 0..{}", n, INT32_MAX));
  return int32_t(n);
}

// spec.schedulingPolicy of a Workload API PodGroup: basic or gang (with minCount); true when it states one.
bool DecodeSchedulingPolicy(dom::element v, const Path& path, PodGroupObject& group) {
  bool stated = false;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    if (json::IsNull(value)) return;
    Path p = path.Field(key);
    if (KeyIs(key, "basic")) {
      group.policy = PodGroupObject::Policy::kBasic;
      stated = true;
    } else if (KeyIs(key, "gang")) {
      group.policy = PodGroupObject::Policy::kGang;
      stated = true;
      ForEachField(value, p, [&](std::string_view k, dom::element f) {
        if (KeyIs(k, "minCount")) group.min_count = MemberCount(f, p.Field(k));
      });
    }
  });
  return stated;
}

// spec.schedulingConstraints.topology[0].key (the API allows one constraint today).
void DecodeTopologyConstraint(dom::element v, const Path& path, PodGroupObject& group) {
  ForEachField(v, path, [&](std::string_view key, dom::element list) {
    if (!KeyIs(key, "topology")) return;
    Path p = path.Field(key);
    ForEachElement(list, p, [&](int i, dom::element c) {
      if (i > 0) return;
      ForEachField(c, p.Index(i), [&](std::string_view k, dom::element f) {
        if (KeyIs(k, "key")) group.topology_key = json::String(f, p.Index(i).Field(k));
      });
    });
  });
}

void DecodePodGroupSpec(dom::element v, const Path& path, PodGroupObject& group) {
  bool policy_stated = false;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (group.api == PodGroupObject::Api::kCoscheduling) {
      if (KeyIs(key, "minMember")) group.min_count = MemberCount(value, p);
    } else if (KeyIs(key, "schedulingPolicy")) {
      policy_stated = DecodeSchedulingPolicy(value, p, group);
    } else if (KeyIs(key, "schedulingConstraints")) {
      DecodeTopologyConstraint(value, p, group);
    } else if (KeyIs(key, "priority") && !json::IsNull(value)) {
      const int64_t priority = json::Int(value, p);
      if (priority < INT32_MIN || priority > INT32_MAX) json::Fail(p, "out of range");
      group.priority = int32_t(priority);
    } else if (KeyIs(key, "disruptionMode") && !json::IsNull(value)) {
      group.disrupted_whole = json::String(value, p) == "PodGroup";
    }
  });
  if (group.api == PodGroupObject::Api::kWorkload && !policy_stated)
    json::Fail(path.Field("schedulingPolicy"), "states neither basic nor gang");
}

// The apiVersion of the object, when it has one, into group.api (read before spec: fields come in any order).
void ReadPodGroupApi(dom::element v, const Path& path, PodGroupObject& group) {
  for (dom::key_value_pair field : dom::object(v)) {
    if (!KeyIs(field.key, "apiVersion")) continue;
    Path p = path.Field(field.key);
    std::string version = json::String(field.value, p);
    if (!PodGroupApiOf(version, &group.api)) {
      json::Fail(p, fmt::format("unsupported PodGroup apiVersion '{}': expected {} or {}", version,
                                kWorkloadPodGroupApiVersion, kCoschedulingPodGroupApiVersion));
    }
  }
}

}  // namespace

PodGroupObject DecodePodGroupValue(dom::element v, const Path& path, PodGroupObject::Api api) {
  PodGroupObject group;
  group.api = api;
  if (v.type() != dom::element_type::OBJECT) json::Fail(path, "expected a PodGroup object");
  ObjectMeta meta;
  WithObjectContext("podgroup", meta, [&] {
    ReadPodGroupApi(v, path, group);
    bool has_spec = false;
    ForEachField(v, path, [&](std::string_view key, dom::element value) {
      Path p = path.Field(key);
      if (KeyIs(key, "metadata")) {
        DecodeMetaValue(value, p, meta);
      } else if (KeyIs(key, "spec")) {
        has_spec = true;
        DecodePodGroupSpec(value, p, group);
      }
    });
    if (!has_spec && group.api == PodGroupObject::Api::kWorkload) json::Fail(path.Field("spec"), "missing");
  });
  group.namespace_ = std::move(meta.namespace_);
  group.name = std::move(meta.name);
  group.uid = std::move(meta.uid);
  return group;
}

Result<NodeObject> DecodeNode(std::string_view json) {
  return DecodeText<NodeObject>(json, [](dom::element v, const Path& p) { return DecodeNodeValue(v, p); });
}

Result<PodObject> DecodePod(std::string_view json) {
  return DecodeText<PodObject>(json, [](dom::element v, const Path& p) { return DecodePodValue(v, p); });
}

Result<PodGroupObject> DecodePodGroup(std::string_view json, PodGroupObject::Api api) {
  return DecodeText<PodGroupObject>(json,
                                    [api](dom::element v, const Path& p) { return DecodePodGroupValue(v, p, api); });
}

}  // namespace topofit::k8s
