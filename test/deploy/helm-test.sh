#!/usr/bin/env bash
# Checks the Helm chart manifests/helm/topofit with helm built from its Go module (build-go-tool.sh):
# `helm lint` passes in both modes; with default values the chart renders exactly the objects of the
# kustomize base (`kustomize build manifests`), compared as parsed data, object by object; the values
# that mirror the overlays render exactly those overlays (node.nodeLabel -> overlays/gpu-label, the dev
# values -> overlays/dev, node.devicePlugin.sidecar=false -> overlays/gpu-operator); mode=primary renders
# the extender alone on the control-plane nodes, and with primary.tls serves HTTPS with the Secret's files;
# metrics.enabled=false drops only the metrics Service; the NetworkPolicies admit only the ops port
# from Prometheus (and networkPolicy.apiServerCIDRs), networkPolicy.enabled=false drops only them; namespace.name moves every object and the
# Lease; bad values are refused with an error that names them. The comparisons are in
# helm/render_checks.py (python3 with PyYAML).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/test/deploy
chart=$root/manifests/helm/topofit
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL: python3 lacks PyYAML (Debian: python3-yaml)" >&2; exit 1; }
helm=${HELM:-$("$here/build-go-tool.sh" helm helm helm.sh/helm/v3/cmd/helm)}
kustomize=${KUSTOMIZE:-$("$here/build-go-tool.sh" kustomize kustomize sigs.k8s.io/kustomize/kustomize/v5)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
check() { python3 "$here/helm/render_checks.py" "$@"; }
# Helm's own state (repositories, cache) stays out of $HOME.
export HELM_CACHE_HOME=$work/helm-cache HELM_CONFIG_HOME=$work/helm-config HELM_DATA_HOME=$work/helm-data
render() { "$helm" template topofit "$chart" "$@"; }

cmp -s "$chart/files/scheduler-config.yaml" "$root/manifests/base/scheduler-config.yaml" ||
  fail "manifests/helm/topofit/files/scheduler-config.yaml differs from manifests/base/scheduler-config.yaml"
echo "ok: the chart carries manifests/base/scheduler-config.yaml"

"$helm" lint --strict "$chart" || fail "helm lint"
"$helm" lint --strict "$chart" --set mode=primary || fail "helm lint (mode=primary)"

"$kustomize" build "$root/manifests" > "$work/base.yaml"
"$kustomize" build "$root/manifests/overlays/gpu-label" > "$work/gpu-label.yaml"
"$kustomize" build "$root/manifests/overlays/dev" > "$work/dev.yaml"
"$kustomize" build "$root/manifests/overlays/gpu-operator" > "$work/gpu-operator.yaml"

render > "$work/helm.yaml" || fail "helm template (default values)"
check equal "$work/helm.yaml" "$work/base.yaml"

render --set node.nodeLabel.key=feature.node.kubernetes.io/pci-10de.present > "$work/helm-gpu-label.yaml"
check equal "$work/helm-gpu-label.yaml" "$work/gpu-label.yaml"

render --set replicas=1 --set image.tag=dev --set image.pullPolicy=Never --set scheduler.verbosity=4 \
  --set node.interval=1m > "$work/helm-dev.yaml"
check equal "$work/helm-dev.yaml" "$work/dev.yaml"

render --set node.devicePlugin.sidecar=false > "$work/helm-gpu-operator.yaml"
check equal "$work/helm-gpu-operator.yaml" "$work/gpu-operator.yaml"

render --set mode=primary > "$work/primary.yaml" || fail "helm template (mode=primary)"
check primary "$work/primary.yaml" "$work/base.yaml"

render --set mode=primary --set primary.listen=0.0.0.0:8888 --set primary.tls.secretName=topofit-tls \
  > "$work/primary-tls.yaml" || fail "helm template (mode=primary with TLS)"
check primary-tls "$work/primary-tls.yaml" topofit-tls

render --set metrics.enabled=false > "$work/no-metrics.yaml"
check without-metrics "$work/no-metrics.yaml" "$work/base.yaml"

render --set-json 'networkPolicy.apiServerCIDRs=["10.0.0.0/28"]' > "$work/np-cidrs.yaml"
check network-policies "$work/np-cidrs.yaml" "$work/base.yaml"
render --set networkPolicy.enabled=false > "$work/no-policies.yaml"
check without-policies "$work/no-policies.yaml" "$work/base.yaml"

render --set namespace.name=gpu-scheduling > "$work/ns.yaml"
check namespace "$work/ns.yaml" gpu-scheduling

# Bad values: refused, and the error names the field.
refuse() {
  local field=$1; shift
  if render "$@" > "$work/bad.out" 2>&1; then fail "helm template $* was accepted"; fi
  grep -q -- "$field" "$work/bad.out" || { cat "$work/bad.out" >&2; fail "helm template $*: the error does not name $field"; }
  echo "ok: $* refused ($(grep -m1 -- "$field" "$work/bad.out" | cut -c1-120))"
}
refuse /mode --set mode=tertiary
refuse /replicas --set replicas=0
refuse /image/pullPolicy --set image.pullPolicy=Sometimes
refuse /node/nodeLabel/values --set-json 'node.nodeLabel.values=[]'
refuse /primary/listen --set mode=primary --set primary.listen=localhost
refuse /node/devicePlugin/sidecar --set node.devicePlugin.sidecar=maybe
refuse /networkPolicy/apiServerCIDRs --set-json 'networkPolicy.apiServerCIDRs=["the api server"]'
echo "PASS"
