#!/usr/bin/env bash
# Pins k8s.io/kubernetes at the version given (e.g. hack/pin-kubernetes.sh v1.36.3): requires it and
# replaces every staging module (the `=> ./staging/src/k8s.io/...` lines of that release's go.mod) with
# the matching v0.Y.Z tag, then tidies. Run from anywhere; edits test/e2e/go.mod and go.sum.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${1:?usage: hack/pin-kubernetes.sh vX.Y.Z}
STAGING_VERSION=v0.${VERSION#v1.}
. ./env.sh
modfile=$(go mod download -json "k8s.io/kubernetes@${VERSION}" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
args=(-require="k8s.io/kubernetes@${VERSION}")
for m in $(sed -n 's#^\s*\(k8s.io/[^ ]*\) => ./staging/src/.*#\1#p' "$modfile"); do
  args+=(-replace="${m}=${m}@${STAGING_VERSION}")
done
go mod edit "${args[@]}"
go mod tidy
