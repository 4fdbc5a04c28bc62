#!/usr/bin/env python3
"""Checks topofit-node, the DaemonSet of `topofit node`, as manifests/ renders it (for test/deploy/manifests-test.sh): what the
DaemonSet must hold for `topofit node` and the NVIDIA device plugin to meet on the node, and what it
may not hold beyond that. Needs PyYAML (Debian: python3-yaml).

usage: check_node.py base RENDER.yaml [REGISTRAR_SOCKET DEVICE_PLUGIN_DIR]
         the base (and every overlay but gpu-operator): the sidecar points KUBELET_SOCKET at the
         registrar socket (the defaults of `topofit node --help` when given), hostPaths, probes of
         least privilege, the rolling update, RBAC exactly as listed below
       check_node.py no-sidecar RENDER.yaml
         overlays/gpu-operator: the same DaemonSet without the NVIDIA plugin and its volume
       check_node.py containers RENDER.yaml
         every container in every workload is locked down; only topofit-node's run as root
"""
import sys

try:
    import yaml
except ImportError:
    sys.exit("check_node.py: PyYAML is missing (Debian: apt-get install python3-yaml)")

DS = "topofit-node"
DEVICE_PLUGINS = "/var/lib/kubelet/device-plugins"
POD_RESOURCES = "/var/lib/kubelet/pod-resources"
# topofit-node's ClusterRole, rule by rule: (apiGroups, resources, verbs).
NODE_RULES = {
    (("",), ("nodes",), ("get", "patch")),
    (("",), ("pods",), ("get", "list", "watch", "patch")),
    (("", "events.k8s.io"), ("events",), ("create",)),
}
WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet", "Job", "CronJob")


def fail(message):
    sys.exit(f"FAIL: {message}")


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def find(objs, kind, name):
    got = [o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name]
    if len(got) != 1:
        fail(f"expected one {kind} {name}, found {len(got)}")
    return got[0]


def env(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def pod_spec(obj):
    spec = obj["spec"]
    if obj["kind"] == "CronJob":
        spec = spec["jobTemplate"]["spec"]
    return spec["template"]["spec"]


def check_mounts(name, pod):
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    used = set()
    for c in pod["containers"] + pod.get("initContainers", []):
        for m in c.get("volumeMounts", []):
            if m["name"] not in volumes:
                fail(f"{name}: container {c['name']} mounts {m['name']}, which is no volume of the pod")
            used.add(m["name"])
    unused = set(volumes) - used
    if unused:
        fail(f"{name}: volumes no container mounts: {sorted(unused)}")
    return volumes


def common(objs):
    ds = find(objs, "DaemonSet", DS)
    pod = pod_spec(ds)
    strategy = ds["spec"].get("updateStrategy", {})
    if strategy.get("type") != "RollingUpdate" or strategy.get("rollingUpdate") != {"maxUnavailable": 1, "maxSurge": 0}:
        fail(f"{DS}: update strategy is {strategy}, want RollingUpdate maxUnavailable 1, maxSurge 0")
    if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        fail(f"{DS}: uses the host's network, PID or IPC namespace")
    if pod.get("serviceAccountName") != DS:
        fail(f"{DS}: service account {pod.get('serviceAccountName')}, want {DS}")
    containers = {c["name"]: c for c in pod["containers"]}
    node = containers.get("node")
    if node is None or node.get("args", [None])[0] != "node":
        fail(f"{DS}: no container named node running `topofit node`")
    if not any(e["name"] == "NODE_NAME" and e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "spec.nodeName"
               for e in node.get("env", [])):
        fail(f"{DS}: the node container lacks NODE_NAME from spec.nodeName")
    volumes = check_mounts(DS, pod)
    host = {name: v["hostPath"]["path"] for name, v in volumes.items() if "hostPath" in v}
    if sorted(host.values()) != [DEVICE_PLUGINS, POD_RESOURCES]:
        fail(f"{DS}: hostPaths {sorted(host.values())}, want exactly {DEVICE_PLUGINS} and {POD_RESOURCES}")
    for c in pod["containers"]:
        for m in c.get("volumeMounts", []):
            path = host.get(m["name"])
            if path and m["mountPath"] != path:
                fail(f"{DS}: {c['name']} mounts {path} at {m['mountPath']}; sockets are named by host path")
            if path == POD_RESOURCES and not m.get("readOnly"):
                fail(f"{DS}: {c['name']} mounts {POD_RESOURCES} writable; it only connects there")
            if path == POD_RESOURCES and c["name"] != "node":
                fail(f"{DS}: {c['name']} mounts {POD_RESOURCES}; only topofit node reads PodResources")
    role = find(objs, "ClusterRole", DS)
    rules = {(tuple(r.get("apiGroups", [])), tuple(r.get("resources", [])), tuple(r.get("verbs", [])))
             for r in role["rules"]}
    if rules != NODE_RULES or len(role["rules"]) != len(NODE_RULES):
        fail(f"ClusterRole {DS}: rules {sorted(rules)}, want exactly {sorted(NODE_RULES)}")
    binding = find(objs, "ClusterRoleBinding", DS)
    if binding["roleRef"]["name"] != DS or [s["name"] for s in binding["subjects"]] != [DS]:
        fail(f"ClusterRoleBinding {DS} binds {binding['roleRef']['name']} to {binding['subjects']}")
    return pod, containers


def base(path, registrar=None, plugin_dir=None):
    pod, containers = common(load(path))
    plugin = containers.get("nvidia-device-plugin")
    if plugin is None or set(containers) != {"node", "nvidia-device-plugin"}:
        fail(f"{DS}: containers {sorted(containers)}, want node and nvidia-device-plugin")
    if not plugin["image"].startswith("nvcr.io/nvidia/k8s-device-plugin:v"):
        fail(f"{DS}: sidecar image {plugin['image']} is not a tagged NVIDIA device plugin")
    want = f"{plugin_dir or DEVICE_PLUGINS}/{registrar or 'topofit-registrar.sock'}"
    got = env(plugin).get("KUBELET_SOCKET")
    if got != want:
        fail(f"{DS}: the NVIDIA plugin's KUBELET_SOCKET is {got}, want topofit's registrar socket {want}")
    if env(plugin).get("DEVICE_ID_STRATEGY") != "uuid":
        fail(f"{DS}: the NVIDIA plugin must name devices by UUID (DEVICE_ID_STRATEGY=uuid)")
    print(f"ok: {path}: {DS} runs topofit node and the NVIDIA plugin with KUBELET_SOCKET={got}; "
          f"hostPaths, rolling update and RBAC as required")


def no_sidecar(path):
    pod, containers = common(load(path))
    if set(containers) != {"node"}:
        fail(f"{DS}: containers {sorted(containers)}, want node alone")
    if any(v["name"] == "plugin-tmp" for v in pod["volumes"]):
        fail(f"{DS}: keeps the sidecar's volume")
    print(f"ok: {path}: {DS} runs topofit node alone")


def containers(path):
    n = 0
    for obj in load(path):
        if obj["kind"] not in WORKLOADS:
            continue
        name = f"{obj['kind']} {obj['metadata']['name']}"
        pod = pod_spec(obj)
        pod_sc = pod.get("securityContext", {})
        if pod_sc.get("seccompProfile", {}).get("type") != "RuntimeDefault":
            fail(f"{name}: no RuntimeDefault seccomp profile")
        for c in pod["containers"] + pod.get("initContainers", []):
            n += 1
            sc = c.get("securityContext", {})
            where = f"{name} container {c['name']}"
            if sc.get("privileged"):
                fail(f"{where}: privileged")
            if sc.get("allowPrivilegeEscalation") is not False:
                fail(f"{where}: allowPrivilegeEscalation is not false")
            if sc.get("readOnlyRootFilesystem") is not True:
                fail(f"{where}: root filesystem is writable")
            if sc.get("capabilities", {}).get("drop") != ["ALL"] or sc.get("capabilities", {}).get("add"):
                fail(f"{where}: capabilities {sc.get('capabilities')}, want drop [ALL] and none added")
            user = sc.get("runAsUser", pod_sc.get("runAsUser"))
            non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
            if user == 0 or not non_root:
                if (obj["kind"], obj["metadata"]["name"]) != ("DaemonSet", DS):
                    fail(f"{where}: may run as root; only topofit-node's containers do")
    if n == 0:
        fail(f"{path}: no containers")
    print(f"ok: {path}: {n} containers locked down; only {DS}'s run as root")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"base": base, "no-sidecar": no_sidecar, "containers": containers}[cmd](*args)
