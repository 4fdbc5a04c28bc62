#!/usr/bin/env python3
"""Checks on rendered manifests for test/deploy/helm-test.sh: compares a Helm rendering with a kustomize
rendering as data, and asserts what the chart's non-default values change.

Both renderings are parsed as YAML streams; empty documents are dropped, and so are labels and
annotations that Helm itself may add (the chart adds none); the objects are keyed by (kind, namespace,
name) and compared as parsed data, so formatting, comments and document order do not matter. Every
failure names the object and shows a unified diff of it. Needs PyYAML (Debian: python3-yaml).

usage: render_checks.py equal HELM.yaml KUSTOMIZE.yaml
       render_checks.py primary PRIMARY.yaml BASE.yaml
       render_checks.py primary-tls PRIMARY-TLS.yaml SECRET
       render_checks.py without-metrics RENDER.yaml BASE.yaml
       render_checks.py namespace RENDER.yaml NAMESPACE
"""
import difflib
import sys

try:
    import yaml
except ImportError:
    sys.exit("render_checks.py: PyYAML is missing (Debian: apt-get install python3-yaml)")

HELM_LABELS = {"helm.sh/chart", "app.kubernetes.io/managed-by", "app.kubernetes.io/instance",
               "app.kubernetes.io/version"}
HELM_ANNOTATION_PREFIXES = ("meta.helm.sh/", "helm.sh/")


class CheckFailed(Exception):
    pass


def load(path):
    """The objects of a YAML stream, keyed by (kind, namespace, name)."""
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d is not None]
    objects = {}
    for d in docs:
        if not isinstance(d, dict) or "kind" not in d or "metadata" not in d:
            raise CheckFailed(f"{path}: a document is not a Kubernetes object: {str(d)[:200]}")
        meta = d["metadata"]
        for field, drop in (("labels", lambda k: k in HELM_LABELS),
                            ("annotations", lambda k: k.startswith(HELM_ANNOTATION_PREFIXES))):
            if field in meta:
                meta[field] = {k: v for k, v in meta[field].items() if not drop(k)}
                if not meta[field]:
                    del meta[field]
        key = (d["kind"], meta.get("namespace", ""), meta["name"])
        if key in objects:
            raise CheckFailed(f"{path}: {fmt(key)} appears twice")
        objects[key] = d
    if not objects:
        raise CheckFailed(f"{path}: no objects")
    return objects


def fmt(key):
    kind, ns, name = key
    return f"{kind} {ns + '/' if ns else ''}{name}"


def diff(a, b, a_name, b_name):
    dump = lambda o: yaml.safe_dump(o, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(dump(a), dump(b), a_name, b_name, lineterm=""))


def require(cond, message):
    if not cond:
        raise CheckFailed(message)


def equal(left_path, right_path):
    left, right = load(left_path), load(right_path)
    only_left = sorted(set(left) - set(right))
    only_right = sorted(set(right) - set(left))
    require(not only_left and not only_right,
            f"different objects: only in {left_path}: {[fmt(k) for k in only_left]}; "
            f"only in {right_path}: {[fmt(k) for k in only_right]}")
    for key in sorted(left):
        require(left[key] == right[key],
                f"{fmt(key)} differs:\n{diff(right[key], left[key], right_path, left_path)}")
    print(f"ok: {left_path} and {right_path} hold the same {len(left)} objects")


def containers(obj):
    return {c["name"]: c for c in obj["spec"]["template"]["spec"]["containers"]}


def primary(primary_path, base_path):
    got, base = load(primary_path), load(base_path)
    ns = "topofit-system"
    want = {("Namespace", "", ns), ("ServiceAccount", ns, "topofit-scheduler"),
            ("ClusterRole", "", "topofit-extender"), ("ClusterRoleBinding", "", "topofit-extender"),
            ("Deployment", ns, "topofit-extender"), ("Service", ns, "topofit-metrics"),
            ("NetworkPolicy", ns, "topofit-extender"),
            ("ValidatingAdmissionPolicy", "", "topofit-gpu-annotations"),
            ("ValidatingAdmissionPolicyBinding", "", "topofit-gpu-annotations")}
    require(set(got) == want, f"primary mode renders {sorted(fmt(k) for k in got)}, "
                              f"want exactly {sorted(fmt(k) for k in want)}")
    # What it shares with the base is the base's, unchanged: the identity and topofit's own RBAC.
    for key in [("Namespace", "", ns), ("ServiceAccount", ns, "topofit-scheduler"),
                ("ClusterRole", "", "topofit-extender"), ("ClusterRoleBinding", "", "topofit-extender"),
                ("ValidatingAdmissionPolicy", "", "topofit-gpu-annotations"),
                ("ValidatingAdmissionPolicyBinding", "", "topofit-gpu-annotations")]:
        require(got[key] == base[key], f"{fmt(key)} differs from the base:\n{diff(base[key], got[key], 'base', 'primary')}")
    dep = got[("Deployment", ns, "topofit-extender")]
    pod = dep["spec"]["template"]["spec"]
    cs = containers(dep)
    require(list(cs) == ["topofit"], f"primary Deployment runs {list(cs)}, want only topofit (no kube-scheduler)")
    args = cs["topofit"]["args"]
    require(args[0] == "serve" and "--listen=127.0.0.1:8888" in args and "--url-prefix=/scheduler" in args,
            f"extender args {args}: the primary kube-scheduler calls http://127.0.0.1:8888/scheduler")
    require(pod.get("hostNetwork") is True, "primary extender must share the control-plane node's network")
    require(pod.get("dnsPolicy") == "ClusterFirstWithHostNet", "hostNetwork pod without ClusterFirstWithHostNet")
    require("node-role.kubernetes.io/control-plane" in pod.get("nodeSelector", {}),
            "primary extender is not placed on control-plane nodes")
    require(any(t.get("key") == "node-role.kubernetes.io/control-plane" for t in pod.get("tolerations", [])),
            "primary extender does not tolerate the control-plane taint")
    anti = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    require(anti["topologyKey"] == "kubernetes.io/hostname", "primary replicas are not spread one per node")
    require(pod["serviceAccountName"] == "topofit-scheduler", "primary extender runs as another account")
    labels = dep["spec"]["template"]["metadata"]["labels"]
    svc = got[("Service", ns, "topofit-metrics")]
    require(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
            f"metrics Service selector {svc['spec']['selector']} does not select the extender {labels}")
    require(svc["spec"]["ports"][0]["targetPort"] == "ops" and
            any(p.get("name") == "ops" for p in cs["topofit"]["ports"]), "metrics Service misses the ops port")
    # Same probes, resources and lock-down as the sidecar of the second mode.
    sidecar = containers(base[("Deployment", ns, "topofit-scheduler")])["topofit"]
    for field in ("livenessProbe", "readinessProbe", "resources", "securityContext", "image"):
        require(cs["topofit"][field] == sidecar[field], f"primary extender's {field} differs from the base sidecar's")
    policy = got[("NetworkPolicy", ns, "topofit-extender")]
    require(all(labels.get(k) == v for k, v in policy["spec"]["podSelector"]["matchLabels"].items()),
            "the primary NetworkPolicy does not select the extender")
    print(f"ok: {primary_path}: the extender alone ({len(got)} objects), on control-plane nodes, "
          "listening on 127.0.0.1:8888")


def primary_tls(render_path, secret):
    """mode=primary with primary.tls.secretName=SECRET and primary.listen=0.0.0.0:8888."""
    got = load(render_path)
    deps = [o for (k, _, n), o in got.items() if k == "Deployment" and n == "topofit-extender"]
    require(len(deps) == 1, "want the topofit-extender Deployment")
    dep = deps[0]
    args = containers(dep)["topofit"]["args"]
    for want in ("--listen=0.0.0.0:8888", "--tls-cert-file=/etc/topofit/tls/tls.crt",
                 "--tls-private-key-file=/etc/topofit/tls/tls.key", "--client-ca-file=/etc/topofit/tls/ca.crt"):
        require(want in args, f"extender args {args} miss {want}")
    mounts = {m["name"]: m for m in containers(dep)["topofit"]["volumeMounts"]}
    require(mounts.get("tls", {}).get("mountPath") == "/etc/topofit/tls", f"the Secret is not mounted: {mounts}")
    volumes = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    require(volumes["tls"]["secret"]["secretName"] == secret, f"the tls volume is not the Secret {secret}")
    print(f"ok: {render_path}: HTTPS on 0.0.0.0:8888 with the Secret {secret}, client certificates required")


def without_metrics(render_path, base_path):
    got, base = load(render_path), load(base_path)
    key = ("Service", "topofit-system", "topofit-metrics")
    require(key in base and key not in got, f"metrics.enabled=false still renders {fmt(key)}")
    del base[key]
    require(set(got) == set(base), f"metrics.enabled=false changes more than the Service: "
                                   f"{sorted(fmt(k) for k in set(got) ^ set(base))}")
    for k in base:
        require(got[k] == base[k], f"{fmt(k)} differs:\n{diff(base[k], got[k], 'base', render_path)}")
    print(f"ok: {render_path}: the base without the metrics Service")


def network_policies(render_path, base_path):
    """The base's NetworkPolicies admit only the ops port (8889), from Prometheus's namespace, to pods that
    the base runs; the render (networkPolicy.apiServerCIDRs=[10.0.0.0/28]) adds that ipBlock and nothing
    else; networkPolicy.enabled=false is checked by without_policies."""
    got, base = load(render_path), load(base_path)
    policies = {k: v for k, v in base.items() if k[0] == "NetworkPolicy"}
    require(len(policies) == 2, f"the base has {len(policies)} NetworkPolicies, want the scheduler's and the node's")
    pod_names = {o["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"]
                 for k, o in base.items() if k[0] in ("Deployment", "DaemonSet")}
    for key, pol in policies.items():
        spec = pol["spec"]
        require(spec["podSelector"]["matchLabels"]["app.kubernetes.io/name"] in pod_names,
                f"{fmt(key)} selects no pod of the base")
        require(spec["policyTypes"] == ["Ingress"] and len(spec["ingress"]) == 1, f"{fmt(key)}: one ingress rule")
        rule = spec["ingress"][0]
        require(rule["ports"] == [{"protocol": "TCP", "port": 8889}], f"{fmt(key)} admits more than the ops port")
        require(rule["from"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
                f"{fmt(key)} admits {rule['from']}")
        with_cidr = got[key]["spec"]["ingress"][0]["from"]
        require(with_cidr == rule["from"] + [{"ipBlock": {"cidr": "10.0.0.0/28"}}],
                f"{fmt(key)} with apiServerCIDRs: {with_cidr}")
    print(f"ok: {render_path}: the NetworkPolicies admit only port 8889 from Prometheus (and the API server's CIDRs)")


def without_policies(render_path, base_path):
    got, base = load(render_path), load(base_path)
    gone = {k for k in base if k[0] == "NetworkPolicy"}
    require(gone and not any(k[0] == "NetworkPolicy" for k in got), "networkPolicy.enabled=false still renders them")
    require(set(got) == set(base) - gone, "networkPolicy.enabled=false changes more than the NetworkPolicies")
    print(f"ok: {render_path}: the base without its NetworkPolicies")


def namespace(render_path, ns):
    got = load(render_path)
    require(("Namespace", "", ns) in got, f"no Namespace {ns}")
    for (kind, obj_ns, name), obj in got.items():
        if kind in ("Namespace", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicyBinding"):
            pass
        elif kind == "ValidatingAdmissionPolicy":
            users = [v["expression"] for v in obj["spec"]["variables"] if v["name"] in ("extender", "node")]
            require(len(users) == 2 and all(f"system:serviceaccount:{ns}:" in u for u in users),
                    f"{fmt((kind, obj_ns, name))} names service accounts outside {ns}: {users}")
        elif (kind, name) == ("RoleBinding", "topofit-scheduler-auth-reader"):
            require(obj_ns == "kube-system", "the authentication reader binding must stay in kube-system")
        else:
            require(obj_ns == ns, f"{fmt((kind, obj_ns, name))} is not in {ns}")
        for s in obj.get("subjects", []):
            require(s.get("namespace") == ns, f"{fmt((kind, obj_ns, name))} binds {s} outside {ns}")
    cms = [o for (k, _, _), o in got.items() if k == "ConfigMap"]
    require(len(cms) == 1, "want one ConfigMap")
    config = yaml.safe_load(cms[0]["data"]["scheduler-config.yaml"])
    require(config["leaderElection"]["resourceNamespace"] == ns,
            f"kube-scheduler's Lease is in {config['leaderElection']['resourceNamespace']}, not {ns}")
    dep = got[("Deployment", ns, "topofit-scheduler")]
    volumes = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
    require(volumes["config"]["configMap"]["name"] == cms[0]["metadata"]["name"],
            "the Deployment mounts another ConfigMap than the one rendered")
    print(f"ok: {render_path}: everything in {ns} but the kube-system reader binding; the Lease follows")


def main(argv):
    commands = {"equal": equal, "primary": primary, "primary-tls": primary_tls, "without-metrics": without_metrics,
                "namespace": namespace, "network-policies": network_policies, "without-policies": without_policies}
    if len(argv) != 4 or argv[1] not in commands:
        sys.exit(__doc__)
    try:
        commands[argv[1]](argv[2], argv[3])
    except CheckFailed as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
