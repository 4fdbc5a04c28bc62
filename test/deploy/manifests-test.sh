#!/usr/bin/env bash
# Renders manifests/ (the base, every overlay and monitoring/) with kustomize, the engine of `kubectl kustomize`,
# and checks what the deployment promises: the objects exist, RBAC never names secrets, every
# container is locked down (only topofit-node's run as root), the topofit-node DaemonSet joins
# `topofit node` and the NVIDIA device plugin on the node (check_node.py), the example pods
# target topofit-scheduler. Given the topofit binary (first argument), the sidecar's KUBELET_SOCKET is
# checked against the defaults of `topofit node --help`; given also its test build topofit-node-testing
# (second argument: the same settings, with --pods-file), the DaemonSet's arguments are run through it. When an upstream
# kube-scheduler from the e2e build is in the cache (or KUBE_SCHEDULER names one), it also loads
# manifests/base/scheduler-config.yaml into it with --write-config-to, which decodes strictly and
# validates the configuration, then exits without contacting any API server.
#
# Not done: `kubectl apply --dry-run=client`. It cannot run offline: even a client-side dry run maps
# each kind to its REST resource through the API server's discovery endpoints and fetches the live
# object to compute the patch, so without a server it fails on the first object. The e2e suite's
# real kube-apiserver checks the rendered objects and their pods with a server-side dry run
# (test/e2e/tests/manifests_test.go, ctest "e2e: manifests (server-side dry run)").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kustomize=${KUSTOMIZE:-$("$root/test/deploy/build-go-tool.sh" kustomize kustomize sigs.k8s.io/kustomize/kustomize/v5)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

for dir in "$root/manifests" "$root"/manifests/overlays/*/; do
  out=$work/$(basename "$dir").yaml
  "$kustomize" build "$dir" > "$out" || fail "kustomize build $dir"
  [ -s "$out" ] || fail "kustomize build $dir rendered nothing"
  echo "ok: rendered ${dir#$root/} ($(grep -c '^kind:' "$out") objects)"
done

base=$work/manifests.yaml
count() { grep -cE -- "$1" "$base" || true; }
for kind in Namespace ServiceAccount ClusterRole ClusterRoleBinding Role RoleBinding ConfigMap \
            Deployment DaemonSet PodDisruptionBudget Service ValidatingAdmissionPolicy \
            ValidatingAdmissionPolicyBinding; do
  [ "$(count "^kind: $kind\$")" -ge 1 ] || fail "no $kind in the rendered base"
done
grep -qw secrets "$base" && fail "RBAC names secrets"
for role in system:kube-scheduler system:volume-scheduler extension-apiserver-authentication-reader; do
  grep -q "name: $role\$" "$base" || fail "scheduler not bound to $role"
done
python3 -c 'import yaml' 2>/dev/null || fail "python3 lacks PyYAML (Debian: python3-yaml)"
for dir in "$root/manifests" "$root"/manifests/overlays/*/; do
  python3 "$root/test/deploy/check_node.py" containers "$work/$(basename "$dir").yaml" || fail "container security"
done
[ "$(count 'path: /healthz')" -ge 2 ] && [ "$(count 'path: /readyz')" -ge 2 ] || fail "probes missing"
grep -q 'prometheus.io/scrape: "true"' "$base" || fail "metrics Service lacks scrape annotations"
grep -q 'fieldPath: spec.nodeName' "$base" || fail "topofit-node lacks NODE_NAME from the downward API"
grep -q -- '- --ops-listen=0.0.0.0:8889' "$base" || fail "topofit-node lacks its ops listener (probes, /metrics)"
grep -q 'runtimeClassName: nvidia' "$base" || fail "topofit-node lacks the nvidia runtime class"
grep -q 'key: nvidia.com/gpu.present' "$base" || fail "topofit-node not restricted to GPU nodes"
grep -q 'key: feature.node.kubernetes.io/pci-10de.present' "$work/gpu-label.yaml" ||
  fail "overlays/gpu-label did not change topofit-node's node label"
echo "ok: base objects, RBAC, security contexts, probes, metrics, topofit-node placement"

# topofit-node: `topofit node` with the NVIDIA plugin registering to its socket, in the base and every
# overlay; overlays/gpu-operator leaves the plugin to the GPU Operator. With the binary, the socket the
# plugin must register to is `topofit node`'s own default.
topofit=${1:-}
node_testing=${2:-}  # Read before the loop below, which re-sets the positional parameters.
registrar=()
if [ -n "$topofit" ]; then
  help=$("$topofit" node --help) || fail "$topofit node --help"
  default() { sed -n "s/^ *$1 TEXT=\([^ ]*\).*/\1/p" <<< "$help" | head -1; }
  registrar=("$(default --registrar-socket)" "$(default --device-plugin-dir)")
  [ -n "${registrar[0]}" ] && [ -n "${registrar[1]}" ] || { echo "$help" >&2; fail "no socket defaults in topofit node --help"; }
fi
for dir in "$root/manifests" "$root"/manifests/overlays/*/; do
  name=$(basename "$dir")
  if [ "$name" = gpu-operator ]; then mode=no-sidecar; set --; else mode=base; set -- "${registrar[@]}"; fi
  python3 "$root/test/deploy/check_node.py" "$mode" "$work/$name.yaml" "$@" || fail "topofit-node in ${dir#$root/}"
done
if [ -n "$node_testing" ]; then
  # The DaemonSet's own arguments, with only its sockets moved into a scratch directory, its pods read
  # from a file and its ops listener on a free loopback port, through the test build (the settings of
  # `topofit node`, plus --pods-file): it exits 2 on an unknown flag or a bad value, and keeps running
  # otherwise.
  args=$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "DaemonSet" and d["metadata"]["name"] == "topofit-node":
        c = [c for c in d["spec"]["template"]["spec"]["containers"] if c["name"] == "node"][0]
        print("\n".join("--ops-listen=127.0.0.1:0" if a.startswith("--ops-listen=") else a for a in c["args"]))' "$base")
  mkdir "$work/dp" && echo '[]' > "$work/pods.json"
  mapfile -t argv <<< "$args"
  rc=0
  NODE_NAME=gpu-node-1 timeout 3 "$node_testing" "${argv[@]}" --device-plugin-dir "$work/dp" --pod-resources-socket '' \
    --pods-file "$work/pods.json" > "$work/node.log" 2>&1 || rc=$?
  [ "$rc" = 124 ] || { cat "$work/node.log" >&2; fail "topofit-node-testing ${argv[*]} exited $rc (want: running until stopped)"; }
  echo "ok: topofit-node-testing ${argv[*]} starts with the manifest's arguments"
fi

# manifests/monitoring (ServiceMonitor, PrometheusRule, the Grafana dashboard's ConfigMap) renders.
"$kustomize" build "$root/manifests/monitoring" > "$work/monitoring.yaml" || fail "kustomize build manifests/monitoring"
for kind in ServiceMonitor PodMonitor PrometheusRule ConfigMap; do
  grep -q "^kind: $kind\$" "$work/monitoring.yaml" || fail "no $kind in manifests/monitoring"
done
grep -q 'grafana_dashboard: "1"' "$work/monitoring.yaml" || fail "dashboard ConfigMap lacks the grafana_dashboard label"
echo "ok: rendered manifests/monitoring"

# The ConfigMap carries the standalone scheduler config verbatim.
cfg=$root/manifests/base/scheduler-config.yaml
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  grep -qF -- "$line" "$base" || fail "ConfigMap lacks '$line' of scheduler-config.yaml"
done < "$cfg"
echo "ok: ConfigMap embeds manifests/base/scheduler-config.yaml"

# Example pods: valid YAML for kustomize, named to topofit-scheduler, tolerating the GPU taint.
mkdir "$work/examples" && cp "$root"/manifests/examples/*.yaml "$work/examples/"
list=$(cd "$work/examples" && printf -- '- %s\n' *.yaml)
printf 'resources:\n%s\n' "$list" > "$work/examples/kustomization.yaml"
"$kustomize" build "$work/examples" > "$work/examples.yaml" || fail "examples do not parse"
pods=$(grep -c '^kind: Pod$' "$work/examples.yaml")
[ "$pods" -ge 2 ] || fail "expected 2 example pods, got $pods"
[ "$(grep -c 'schedulerName: topofit-scheduler' "$work/examples.yaml")" -eq "$pods" ] ||
  fail "an example pod does not use topofit-scheduler"
grep -q 'topofit.io/topology-policy: required' "$work/examples.yaml" || fail "no required-policy example"
echo "ok: $pods example pods"

# The real kube-scheduler validates the config (strict decoding + validation), offline.
sched=${KUBE_SCHEDULER:-}
if [ -z "$sched" ]; then
  . "$root/test/e2e/env.sh"
  sched=$(ls -t "$TOPOFIT_E2E_CACHE"/bin/*/kube-scheduler 2>/dev/null | grep -v '\.tmp' | head -1 || true)
fi
if [ -n "$sched" ] && [ -x "$sched" ]; then
  cat > "$work/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
KC
  { echo "clientConnection:"; echo "  kubeconfig: $work/kubeconfig"; cat "$cfg"; } > "$work/sched.yaml"
  "$sched" --config "$work/sched.yaml" --write-config-to "$work/effective.yaml" \
    --secure-port 0 > "$work/sched.log" 2>&1 || { cat "$work/sched.log" >&2; fail "kube-scheduler rejects scheduler-config.yaml"; }
  grep -q 'schedulerName: topofit-scheduler' "$work/effective.yaml" || fail "effective config lost the profile"
  echo "ok: $sched accepts manifests/base/scheduler-config.yaml"
else
  echo "skip: no upstream kube-scheduler built yet (test/e2e/build.sh); config not loaded"
fi
echo "PASS"
