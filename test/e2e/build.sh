#!/usr/bin/env bash
# Builds upstream kube-apiserver and kube-scheduler (the k8s.io/kubernetes version pinned in go.mod)
# into $TOPOFIT_E2E_CACHE/bin/<key>/, where <key> hashes go.mod, go.sum, cmd/ and the Go version:
# an unchanged tree reuses the binaries without invoking the Go build at all. Prints the bin dir.
set -euo pipefail
cd "$(dirname "$0")"
. ./env.sh
key=$( { go version; cat go.mod go.sum; find cmd -type f -name '*.go' | LC_ALL=C sort | xargs cat; } \
       | sha256sum | cut -c1-16)
bindir=$TOPOFIT_E2E_CACHE/bin/$key
if [ -x "$bindir/kube-apiserver" ] && [ -x "$bindir/kube-scheduler" ]; then
  echo "build.sh: upstream binaries up to date in $bindir" >&2
  echo "$bindir"
  exit 0
fi
mkdir -p "$(dirname "$bindir")"
tmp=$(mktemp -d "$bindir.tmp.XXXXXX")   # concurrent builds each get their own
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
start=$(date +%s)
echo "build.sh: building kube-apiserver and kube-scheduler into $bindir (first build: 10-30 min on 2 cores)" >&2
go build -trimpath -ldflags='-s -w' -o "$tmp/" ./cmd/kube-apiserver ./cmd/kube-scheduler >&2
# First finisher wins; a later one finds $bindir in place and drops its copy.
mv -T "$tmp" "$bindir" 2>/dev/null || true
echo "build.sh: built in $(( $(date +%s) - start ))s" >&2
echo "$bindir"
