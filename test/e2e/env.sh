# Sourced by run.sh and hack/*.sh: the Go toolchain and the persistent caches of the e2e suite.
# Everything that is slow to make (modules, build cache, the upstream binaries) lives under
# ${TOPOFIT_E2E_CACHE:-/var/cache/topofit-e2e}, outside the repository, so a second run is fast.
if [ -z "${TOPOFIT_E2E_CACHE:-}" ]; then
  TOPOFIT_E2E_CACHE=/var/cache/topofit-e2e
  # Not root: a per-user cache instead.
  mkdir -p "$TOPOFIT_E2E_CACHE" 2>/dev/null && [ -w "$TOPOFIT_E2E_CACHE" ] ||
    TOPOFIT_E2E_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/topofit-e2e
fi
export TOPOFIT_E2E_CACHE
export GOMODCACHE=${GOMODCACHE:-$TOPOFIT_E2E_CACHE/gomod}
export GOCACHE=${GOCACHE:-$TOPOFIT_E2E_CACHE/gobuild}
# -trimpath everywhere: build.sh and `go test` then share one build cache.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-buildvcs=false -trimpath"
export CGO_ENABLED=${CGO_ENABLED:-0}
for d in /usr/local/go/bin /usr/lib/go/bin "$HOME/go/bin"; do
  case ":$PATH:" in *":$d:"*) ;; *) [ -d "$d" ] && PATH="$PATH:$d" ;; esac
done
export PATH
