#!/usr/bin/env bash
# Builds a Go command the deploy checks use, from the module pinned in test/deploy/<dir>/go.mod, with
# the e2e suite's Go caches, into $TOPOFIT_E2E_CACHE/bin/<name>-<key>/, keyed on that go.mod, go.sum
# and the Go version, so an unchanged tree reuses the binary without invoking the Go build. Prints its
# path.   build-go-tool.sh NAME DIR PACKAGE
#   kustomize: sigs.k8s.io/kustomize/kustomize/v5 (the engine of `kubectl kustomize`; Debian's
#              kubernetes-client embeds one too old for these manifests)
#   helm:      helm.sh/helm/v3/cmd/helm
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: build-go-tool.sh NAME DIR PACKAGE" >&2; exit 2; }
name=$1 dir=$2 pkg=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/env.sh"
cd "$here/$dir"
key=$( { go version; cat go.mod go.sum; } | sha256sum | cut -c1-16)
bindir=$TOPOFIT_E2E_CACHE/bin/$name-$key
if [ ! -x "$bindir/$name" ]; then
  echo "build-go-tool.sh: building $name into $bindir" >&2
  mkdir -p "$bindir.tmp.$$"
  go build -trimpath -ldflags='-s -w' -o "$bindir.tmp.$$/$name" "$pkg" >&2
  rm -rf "$bindir" && mv "$bindir.tmp.$$" "$bindir"
fi
echo "$bindir/$name"
