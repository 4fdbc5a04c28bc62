// Decoding of DeviceClass, ResourceSlice and ResourceClaim (resource.k8s.io/v1).
#include "extender/k8s/dra_decoder.h"

#include <fmt/format.h>

#include "extender/k8s/object_decoder.h"

namespace topofit::k8s {
namespace {

using json::ForEachElement;
using json::ForEachField;
using json::KeyIs;
using json::Path;
namespace dom = json::dom;

void CheckBound(size_t n, size_t max, const Path& path) {
  if (n > max) json::Fail(path, fmt::format("more than {}", max));
}

// One attribute value: {"string": ...} | {"int": ...} | {"bool": ...} | {"version": ...}.
std::string AttributeValue(dom::element v, const Path& path) {
  std::string out;
  bool seen = false;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "string") || KeyIs(key, "version")) out = json::String(value, p);
    else if (KeyIs(key, "int")) out = std::to_string(json::Int(value, p));
    else if (KeyIs(key, "bool")) out = json::Bool(value, p) ? "true" : "false";
    else json::Fail(p, "expected one of int, bool, string, version");
    seen = true;
  });
  if (!seen) json::Fail(path, "expected one of int, bool, string, version");
  return out;
}

DraDevice DecodeDevice(dom::element v, const Path& path, const std::string& driver) {
  DraDevice d;
  size_t described = 0;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "name")) {
      d.name = json::String(value, p);
    } else if (KeyIs(key, "attributes")) {
      ForEachField(value, p, [&](std::string_view name, dom::element a) {
        CheckBound(++described, kMaxAttributesPerDevice, p);
        std::string qualified = name.find('/') == std::string_view::npos ? driver + "/" + std::string(name)
                                                                          : std::string(name);
        d.attributes.insert_or_assign(std::move(qualified), AttributeValue(a, p.Field(name)));
      });
    } else if (KeyIs(key, "capacity")) {
      ForEachField(value, p, [&](std::string_view, dom::element) { CheckBound(++described, kMaxAttributesPerDevice, p); });
    } else if (KeyIs(key, "taints")) {
      ForEachElement(value, p, [&](int i, dom::element t) {
        ForEachField(t, p.Index(i), [&](std::string_view k, dom::element e) {
          if (!KeyIs(k, "effect")) return;
          std::string effect = json::String(e, p.Index(i).Field(k));
          d.tainted |= effect == "NoSchedule" || effect == "NoExecute";
        });
      });
    }
  });
  return d;
}

// spec.devices needs the driver (for qualified attribute names), which may come after it.
void DecodeSliceSpec(dom::element v, const Path& path, ResourceSliceObject& s) {
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    if (KeyIs(key, "driver")) s.driver = json::String(value, path.Field(key));
  });
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "nodeName")) {
      s.node_name = json::String(value, p);
    } else if (KeyIs(key, "pool")) {
      ForEachField(value, p, [&](std::string_view k, dom::element f) {
        if (KeyIs(k, "name")) s.pool = json::String(f, p.Field(k));
        else if (KeyIs(k, "generation")) s.generation = json::Int(f, p.Field(k));
        else if (KeyIs(k, "resourceSliceCount")) s.slice_count = json::Int(f, p.Field(k));
      });
    } else if (KeyIs(key, "devices")) {
      ForEachElement(value, p, [&](int i, dom::element d) {
        CheckBound(s.devices.size() + 1, kMaxDevicesPerSlice, p);
        s.devices.push_back(DecodeDevice(d, p.Index(i), s.driver));
        ForEachField(d, p.Index(i), [&](std::string_view k, dom::element f) {
          if (KeyIs(k, "bindingConditions") && !json::IsNull(f) && f.type() == dom::element_type::ARRAY &&
              dom::array(f).size() > 0)
            s.binding_conditions = true;
        });
      });
    }
  });
}

// The controlling Pod owner reference, if any.
PodReference OwnerPod(dom::element meta, const Path& path) {
  PodReference out;
  ForEachField(meta, path, [&](std::string_view key, dom::element refs) {
    if (!KeyIs(key, "ownerReferences")) return;
    Path p = path.Field(key);
    ForEachElement(refs, p, [&](int i, dom::element ref) {
      PodReference r;
      std::string kind;
      bool controller = false;
      ForEachField(ref, p.Index(i), [&](std::string_view k, dom::element f) {
        Path pf = p.Index(i).Field(k);
        if (KeyIs(k, "kind")) kind = json::String(f, pf);
        else if (KeyIs(k, "name")) r.name = json::String(f, pf);
        else if (KeyIs(k, "uid")) r.uid = json::String(f, pf);
        else if (KeyIs(k, "controller")) controller = json::Bool(f, pf);
      });
      if (kind == "Pod" && controller) out = std::move(r);
    });
  });
  return out;
}

void DecodeAllocation(dom::element v, const Path& path, ResourceClaimObject& c) {
  c.allocated = !json::IsNull(v);
  ForEachField(v, path, [&](std::string_view key, dom::element devices) {
    if (!KeyIs(key, "devices")) return;
    Path p = path.Field(key);
    ForEachField(devices, p, [&](std::string_view k, dom::element results) {
      if (!KeyIs(k, "results")) return;
      Path pr = p.Field(k);
      ForEachElement(results, pr, [&](int i, dom::element r) {
        CheckBound(c.results.size() + 1, kMaxAllocationResults, pr);
        DeviceResult out;
        ForEachField(r, pr.Index(i), [&](std::string_view f, dom::element value) {
          Path pf = pr.Index(i).Field(f);
          if (KeyIs(f, "request")) out.request = json::String(value, pf);
          else if (KeyIs(f, "driver")) out.driver = json::String(value, pf);
          else if (KeyIs(f, "pool")) out.pool = json::String(value, pf);
          else if (KeyIs(f, "device")) out.device = json::String(value, pf);
        });
        c.results.push_back(std::move(out));
      });
    });
  });
}

// One selectors[] list: the CEL expressions, in order.
void CelSelectors(dom::element v, const Path& path, std::vector<std::string>& out) {
  ForEachElement(v, path, [&](int i, dom::element sel) {
    CheckBound(out.size() + 1, kMaxClassSelectors, path);
    ForEachField(sel, path.Index(i), [&](std::string_view k, dom::element cel) {
      if (!KeyIs(k, "cel")) return;
      ForEachField(cel, path.Index(i).Field(k), [&](std::string_view e, dom::element expr) {
        if (KeyIs(e, "expression")) out.push_back(json::String(expr, path.Index(i).Field(k).Field(e)));
      });
    });
  });
}

void DecodeExactRequest(dom::element v, const Path& path, DeviceRequest& r) {
  ForEachField(v, path, [&](std::string_view k, dom::element f) {
    Path p = path.Field(k);
    if (KeyIs(k, "deviceClassName")) r.device_class = json::String(f, p);
    else if (KeyIs(k, "allocationMode")) r.all = json::String(f, p) == "All";
    else if (KeyIs(k, "count")) r.count = json::Int(f, p);
    else if (KeyIs(k, "selectors")) CelSelectors(f, p, r.cel_selectors);
    else if (KeyIs(k, "tolerations"))
      r.tolerates = !json::IsNull(f) && f.type() == dom::element_type::ARRAY && dom::array(f).size() > 0;
  });
}

DeviceRequest DecodeDeviceRequest(dom::element v, const Path& path) {
  DeviceRequest r;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "name")) r.name = json::String(value, p);
    else if (KeyIs(key, "firstAvailable")) r.first_available = !json::IsNull(value);
    else if (KeyIs(key, "exactly")) DecodeExactRequest(value, p, r);
  });
  if (r.count < 1 || r.count > int64_t(kMaxDevicesPerSlice)) json::Fail(path.Field("exactly").Field("count"), "out of range 1..128");
  return r;
}

DeviceConstraint DecodeDeviceConstraint(dom::element v, const Path& path) {
  DeviceConstraint c;
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "requests")) {
      ForEachElement(value, p, [&](int i, dom::element r) {
        CheckBound(c.requests.size() + 1, kMaxDeviceRequests, p);
        c.requests.push_back(json::String(r, p.Index(i)));
      });
    } else if (KeyIs(key, "matchAttribute")) {
      c.match_attribute = json::String(value, p);
    } else if (!json::IsNull(value)) {
      c.other = true;
    }
  });
  return c;
}

void DecodeClaimSpec(dom::element v, const Path& path, ResourceClaimObject& c) {
  ForEachField(v, path, [&](std::string_view key, dom::element devices) {
    if (!KeyIs(key, "devices")) return;
    Path p = path.Field(key);
    ForEachField(devices, p, [&](std::string_view k, dom::element list) {
      Path pl = p.Field(k);
      if (KeyIs(k, "requests")) {
        ForEachElement(list, pl, [&](int i, dom::element r) {
          CheckBound(c.requests.size() + 1, kMaxDeviceRequests, pl);
          c.requests.push_back(DecodeDeviceRequest(r, pl.Index(i)));
        });
      } else if (KeyIs(k, "constraints")) {
        ForEachElement(list, pl, [&](int i, dom::element r) {
          CheckBound(c.constraints.size() + 1, kMaxDeviceRequests, pl);
          c.constraints.push_back(DecodeDeviceConstraint(r, pl.Index(i)));
        });
      }
    });
  });
}

void DecodeClaimStatus(dom::element v, const Path& path, ResourceClaimObject& c) {
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "allocation")) {
      DecodeAllocation(value, p, c);
    } else if (KeyIs(key, "reservedFor")) {
      ForEachElement(value, p, [&](int i, dom::element ref) {
        CheckBound(c.reserved_for.size() + 1, kMaxReservedFor, p);
        PodReference r;
        std::string resource;
        ForEachField(ref, p.Index(i), [&](std::string_view k, dom::element f) {
          Path pf = p.Index(i).Field(k);
          if (KeyIs(k, "resource")) resource = json::String(f, pf);
          else if (KeyIs(k, "name")) r.name = json::String(f, pf);
          else if (KeyIs(k, "uid")) r.uid = json::String(f, pf);
        });
        if (resource == "pods") c.reserved_for.push_back(std::move(r));
      });
    }
  });
}

void DecodeClassSpec(dom::element v, const Path& path, DeviceClassObject& c) {
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    Path p = path.Field(key);
    if (KeyIs(key, "extendedResourceName")) {
      c.extended_resource_name = json::String(value, p);
    } else if (KeyIs(key, "selectors")) {
      CelSelectors(value, p, c.cel_selectors);
    }
  });
}

// The object's metadata first (errors then name it), then f(key, value) for its other fields.
template <typename Obj, typename F>
Obj DecodeObject(std::string_view kind, dom::element v, const Path& path, F&& f) {
  Obj obj;
  if (v.type() != dom::element_type::OBJECT) json::Fail(path, fmt::format("expected a {} object", kind));
  ForEachField(v, path, [&](std::string_view key, dom::element value) {
    if (KeyIs(key, "metadata")) DecodeMetaValue(value, path.Field(key), obj.meta);
  });
  WithObjectContext(kind, obj.meta, [&] {
    ForEachField(v, path, [&](std::string_view key, dom::element value) { f(obj, key, value, path.Field(key)); });
  });
  return obj;
}

std::string CreationTimestamp(dom::element meta, const Path& path) {
  std::string out;
  ForEachField(meta, path, [&](std::string_view key, dom::element value) {
    if (KeyIs(key, "creationTimestamp")) out = json::String(value, path.Field(key));
  });
  return out;
}

}  // namespace

void DecodePodResourceClaims(dom::element v, const Path& path, PodObject& pod) {
  ForEachElement(v, path, [&](int i, dom::element e) {
    if (pod.resource_claims.size() >= kMaxDeviceRequests) {
      pod.claims_unread = true;
      return;
    }
    PodClaimRef ref;
    ForEachField(e, path.Index(i), [&](std::string_view k, dom::element f) {
      Path p = path.Index(i).Field(k);
      if (KeyIs(k, "name")) ref.name = json::String(f, p);
      else if (KeyIs(k, "resourceClaimName") && !json::IsNull(f)) ref.claim = json::String(f, p);
      else if (KeyIs(k, "resourceClaimTemplateName") && !json::IsNull(f)) ref.from_template = true;
    });
    pod.resource_claims.push_back(std::move(ref));
  });
}

void DecodePodClaimStatuses(dom::element v, const Path& path, std::map<std::string, std::string>& out) {
  ForEachElement(v, path, [&](int i, dom::element e) {
    std::string name, claim;
    ForEachField(e, path.Index(i), [&](std::string_view k, dom::element f) {
      Path p = path.Index(i).Field(k);
      if (KeyIs(k, "name")) name = json::String(f, p);
      else if (KeyIs(k, "resourceClaimName") && !json::IsNull(f)) claim = json::String(f, p);
    });
    if (out.size() < kMaxDeviceRequests) out[name] = claim;
  });
}

DeviceClassObject DecodeDeviceClassValue(dom::element v, const Path& path) {
  return DecodeObject<DeviceClassObject>(
      "deviceclass", v, path, [](DeviceClassObject& c, std::string_view key, dom::element value, const Path& p) {
        if (KeyIs(key, "metadata")) c.creation_timestamp = CreationTimestamp(value, p);
        else if (KeyIs(key, "spec")) DecodeClassSpec(value, p, c);
      });
}

ResourceSliceObject DecodeResourceSliceValue(dom::element v, const Path& path) {
  return DecodeObject<ResourceSliceObject>(
      "resourceslice", v, path, [](ResourceSliceObject& s, std::string_view key, dom::element value, const Path& p) {
        if (KeyIs(key, "spec")) DecodeSliceSpec(value, p, s);
      });
}

ResourceClaimObject DecodeResourceClaimValue(dom::element v, const Path& path) {
  ResourceClaimObject claim = DecodeObject<ResourceClaimObject>(
      "resourceclaim", v, path, [](ResourceClaimObject& c, std::string_view key, dom::element value, const Path& p) {
        if (KeyIs(key, "metadata")) c.owner_pod = OwnerPod(value, p);
        else if (KeyIs(key, "spec")) DecodeClaimSpec(value, p, c);
        else if (KeyIs(key, "status")) DecodeClaimStatus(value, p, c);
      });
  auto it = claim.meta.annotations.find(kExtendedResourceClaimAnnotation);
  claim.extended_resource = it != claim.meta.annotations.end() && it->second == "true";
  return claim;
}

Result<DeviceClassObject> DecodeDeviceClass(std::string_view json) {
  return DecodeText<DeviceClassObject>(json, [](dom::element v, const Path& p) { return DecodeDeviceClassValue(v, p); });
}

Result<ResourceSliceObject> DecodeResourceSlice(std::string_view json) {
  return DecodeText<ResourceSliceObject>(json,
                                         [](dom::element v, const Path& p) { return DecodeResourceSliceValue(v, p); });
}

Result<ResourceClaimObject> DecodeResourceClaim(std::string_view json) {
  return DecodeText<ResourceClaimObject>(json,
                                         [](dom::element v, const Path& p) { return DecodeResourceClaimValue(v, p); });
}

}  // namespace topofit::k8s
