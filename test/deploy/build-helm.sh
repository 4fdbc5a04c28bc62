#!/usr/bin/env bash
# Builds helm (helm.sh/helm/v3/cmd/helm, the release pinned in helm/go.mod) with the e2e suite's Go
# caches, into $TOPOFIT_E2E_CACHE/bin/helm-<key>/, keyed on go.mod, go.sum and the Go version, so an
# unchanged tree reuses it without invoking the Go build. Prints the binary's path. Used by the checks
# on manifests/helm/topofit, exactly as build-kustomize.sh serves those on the kustomize base.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/env.sh"
cd "$here/helm"
key=$( { go version; cat go.mod go.sum; } | sha256sum | cut -c1-16)
bindir=$TOPOFIT_E2E_CACHE/bin/helm-$key
if [ ! -x "$bindir/helm" ]; then
  echo "build-helm.sh: building helm into $bindir (a few minutes)" >&2
  mkdir -p "$bindir.tmp.$$"
  go build -trimpath -ldflags='-s -w' -o "$bindir.tmp.$$/helm" helm.sh/helm/v3/cmd/helm >&2
  rm -rf "$bindir" && mv "$bindir.tmp.$$" "$bindir"
fi
echo "$bindir/helm"
