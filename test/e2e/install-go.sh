#!/usr/bin/env bash
# Makes sure a Go toolchain new enough for go.mod (its `go` line) is available and prints the
# directory holding its `go` binary. Works from Debian packages and the Go module proxy alone:
#   1. a go on PATH, /usr/local/go/bin or /usr/lib/go*/bin that is new enough: use it;
#   2. otherwise any go (Debian bookworm's golang-go is 1.19; `apt-get install golang-go` if none)
#      fetches the official toolchain as the module golang.org/toolchain@v0.0.1-goX.Y.Z.<os>-<arch>
#      from the module proxy - the same module Go >= 1.21 uses for GOTOOLCHAIN switching, but fetched
#      with `go mod download`, which Go 1.19 has too - and unpacks it under $TOPOFIT_E2E_CACHE.
# TOPOFIT_E2E_GO_VERSION overrides the version fetched in step 2 (default: go.mod's toolchain or go line).
set -euo pipefail
cd "$(dirname "$0")"
export TOPOFIT_E2E_CACHE=${TOPOFIT_E2E_CACHE:-/var/cache/topofit-e2e}

need=$(sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)
want=${TOPOFIT_E2E_GO_VERSION:-$(sed -n 's/^toolchain go\([0-9.]*\).*/\1/p' go.mod)}
want=${want:-$need}

# version_ge A B: A >= B for dotted versions.
version_ge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$2" ]; }
go_version() { "$1" env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*//'; }

candidates=()
command -v go >/dev/null 2>&1 && candidates+=("$(command -v go)")
for g in /usr/local/go/bin/go "$TOPOFIT_E2E_CACHE"/go*/bin/go /usr/lib/go/bin/go /usr/lib/go-*/bin/go; do
  [ -x "$g" ] && candidates+=("$g")
done
for g in "${candidates[@]}"; do
  v=$(GOTOOLCHAIN=local go_version "$g" || true)
  if [ -n "$v" ] && version_ge "$v" "$need" && [ "${TOPOFIT_E2E_FORCE_TOOLCHAIN_DOWNLOAD:-0}" != 1 ]; then
    dirname "$g"
    exit 0
  fi
done

dest=$TOPOFIT_E2E_CACHE/go$want
if [ -x "$dest/bin/go" ]; then
  echo "$dest/bin"
  exit 0
fi

bootstrap=""
for g in "${candidates[@]}"; do bootstrap=$g; break; done
if [ -z "$bootstrap" ]; then
  echo "install-go.sh: no Go found; installing Debian's golang-go to bootstrap" >&2
  if [ "$(id -u)" != 0 ]; then
    echo "install-go.sh: need root for apt-get (or put Go >= $need on PATH)" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq golang-go >&2
  bootstrap=$(command -v go)
fi

goos=$(uname -s | tr 'A-Z' 'a-z')
case "$(uname -m)" in
  x86_64) goarch=amd64 ;; aarch64|arm64) goarch=arm64 ;; *) goarch=$(uname -m) ;;
esac
mod="golang.org/toolchain@v0.0.1-go${want}.${goos}-${goarch}"
echo "install-go.sh: $("$bootstrap" version) is older than go $need; fetching $mod from the module proxy" >&2
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
# A throwaway module cache: the fetched tree is copied out and made executable (module zips carry
# no file modes), exactly as the go command does for GOTOOLCHAIN downloads.
(cd "$tmp" && GOMODCACHE="$tmp/mod" GOFLAGS=-mod=mod GOTOOLCHAIN=local \
   "$bootstrap" mod download -json "$mod" > "$tmp/dl.json")
src=$(sed -n 's/.*"Dir": "\(.*\)",*/\1/p' "$tmp/dl.json")
if [ -z "$src" ] || [ ! -f "$src/bin/go" ]; then
  echo "install-go.sh: download of $mod failed:" >&2
  cat "$tmp/dl.json" >&2
  exit 1
fi
mkdir -p "$TOPOFIT_E2E_CACHE"
rm -rf "$dest.tmp"
cp -r "$src" "$dest.tmp"
chmod -R u+w "$dest.tmp"
chmod +x "$dest.tmp"/bin/* "$dest.tmp"/pkg/tool/*/*
mv "$dest.tmp" "$dest"
"$dest/bin/go" version >&2
echo "$dest/bin"
