#!/usr/bin/env bash
# Builds kustomize (sigs.k8s.io/kustomize/kustomize/v5, the version pinned in kustomize/go.mod: the
# engine behind `kubectl kustomize` / `kubectl apply -k`) with the e2e suite's Go caches, into
# $TOPOFIT_E2E_CACHE/bin/kustomize-<key>/, keyed on go.mod, go.sum and the Go version, so an
# unchanged tree reuses it without invoking the Go build. Prints the binary's path.
# Debian's kubernetes-client (1.20) embeds a kustomize too old for these manifests.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/env.sh"
cd "$here/kustomize"
key=$( { go version; cat go.mod go.sum; } | sha256sum | cut -c1-16)
bindir=$TOPOFIT_E2E_CACHE/bin/kustomize-$key
if [ ! -x "$bindir/kustomize" ]; then
  echo "build-kustomize.sh: building kustomize into $bindir (about a minute)" >&2
  mkdir -p "$bindir.tmp.$$"
  go build -trimpath -ldflags='-s -w' -o "$bindir.tmp.$$/kustomize" sigs.k8s.io/kustomize/kustomize/v5 >&2
  rm -rf "$bindir" && mv "$bindir.tmp.$$" "$bindir"
fi
echo "$bindir/kustomize"
