#!/usr/bin/env bash
# The kube-scheduler image in manifests/ must be the Kubernetes release the e2e suite builds and tests
# (k8s.io/kubernetes in test/e2e/go.mod): otherwise the deployed scheduler is not the one proven.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
gomod=$root/test/e2e/go.mod
want=$(sed -n 's#^[[:space:]]*k8s.io/kubernetes \(v[0-9][^ ]*\).*#\1#p' "$gomod" | head -1)
if [ -z "$want" ]; then echo "FAIL: no k8s.io/kubernetes version in $gomod" >&2; exit 1; fi
images=$(grep -rhoE 'registry\.k8s\.io/kube-scheduler:[^[:space:]"]+' "$root/manifests" | sort -u)
if [ -z "$images" ]; then echo "FAIL: no kube-scheduler image in manifests/" >&2; exit 1; fi
status=0
for img in $images; do
  if [ "${img##*:}" != "$want" ]; then
    echo "FAIL: manifests use $img but test/e2e/go.mod pins k8s.io/kubernetes $want" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "ok: kube-scheduler $want in manifests/ and test/e2e/go.mod"
exit $status
