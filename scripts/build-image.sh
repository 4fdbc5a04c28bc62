#!/usr/bin/env bash
# Builds the topofit container image with podman from a Debian base made here, without any container
# registry, and checks it: `topofit --version` runs as the image's non-root user (65532) with a
# read-only root filesystem, and that filesystem really is read-only to it.
#   1. debootstrap a minimal Debian (the release and mirror this machine's apt uses) into a rootfs and
#      `podman import` it as localhost/topofit-debian-base:<release> (kept; --rebuild-base remakes it);
#   2. `podman build` the Dockerfile with that image as both of its bases (BUILD_BASE, RUNTIME_BASE);
#   3. run the checks.
# Needs root (debootstrap, rootful podman) and the packages of `scripts/install-deps.sh image`; the build
# stage installs its packages from the network (--network=host), as a Dockerfile build does.
# Usage: scripts/build-image.sh [--rebuild-base] [--tag NAME]   (default tag localhost/topofit:dev)
set -euo pipefail
cd "$(dirname "$0")/.."

TAG=localhost/topofit:dev
REBUILD_BASE=0
while (($#)); do
  case "$1" in
    --rebuild-base) REBUILD_BASE=1 ;;
    --tag) TAG=$2; shift ;;
    *) echo "build-image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ "$(id -u)" -ne 0 ]; then
  echo "build-image.sh: run as root (debootstrap and podman need it)" >&2
  exit 2
fi
scripts/install-deps.sh image

. /etc/os-release
RELEASE=${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}
# The mirror apt already uses for the main suite: deb822 files (URIs: / Suites:) or one-line sources.
MIRROR=$(
  {
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] || continue
      awk -v rel="$RELEASE" '
        function flush() { if (!done && uri != "" && deb && suites ~ ("(^| )" rel "( |$)")) { print uri; done = 1; exit } uri = ""; suites = ""; deb = 0 }
        /^[[:space:]]*$/ { flush(); next }
        /^Types:/ { deb = ($0 ~ /(^|[: ])deb( |$)/) }
        /^URIs:/ { uri = $2 }
        /^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0 }
        END { flush() }' "$f"
    done
    { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
      awk -v rel="$RELEASE" '$1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($i ~ /^\[/ || $i ~ /\]$/) i++; if ($(i + 1) == rel) print $i }'
  } | head -n1
)
if [ -z "$MIRROR" ]; then
  echo "build-image.sh: found no apt source for $RELEASE in /etc/apt/sources.list*" >&2
  exit 1
fi

BASE=localhost/topofit-debian-base:$RELEASE
if [ "$REBUILD_BASE" = 1 ] || ! podman image exists "$BASE"; then
  rootfs=$(mktemp -d)
  trap 'rm -rf "$rootfs"' EXIT
  echo "== debootstrap --variant=minbase $RELEASE from this machine's apt mirror"
  debootstrap --variant=minbase "$RELEASE" "$rootfs" "$MIRROR" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | podman import --change 'CMD ["/bin/bash"]' - "$BASE"
  rm -rf "$rootfs"
  trap - EXIT
fi

# Machines that run this inside a container (a CI runner, a sandbox) can refuse crun's cgroup setup
# ("cgroups in hybrid mode") or its raising of rlimits: there, runc with limits below the caller's.
PODMAN=(podman)
LIMITS=()
if ! podman run --rm --network=none "$BASE" true 2>/dev/null; then
  PODMAN=(podman --runtime runc)
  LIMITS=(--ulimit nofile=16384:16384 --ulimit nproc=8192:8192)
  "${PODMAN[@]}" run --rm --network=none "${LIMITS[@]}" "$BASE" true ||
    { echo "build-image.sh: podman cannot run a container here, with crun or with runc" >&2; exit 1; }
  echo "== podman: the default runtime cannot start a container here; using runc with ${LIMITS[*]}"
fi

echo "== podman build -t $TAG (base $BASE)"
REVISION=$(git describe --always --dirty --tags 2>/dev/null || echo unknown)
# The build stage installs packages with apt: the host's network.
"${PODMAN[@]}" build --network=host "${LIMITS[@]}" --build-arg BUILD_BASE="$BASE" --build-arg RUNTIME_BASE="$BASE" \
  --build-arg TOPOFIT_GIT_REVISION="$REVISION" -t "$TAG" .

echo "== checks"
fail() { echo "build-image.sh: FAIL: $*" >&2; exit 1; }
RUN=("${PODMAN[@]}" run --rm --read-only --network=none "${LIMITS[@]}")
user=$(podman image inspect --format '{{.Config.User}}' "$TAG")
[ "$user" = "65532:65532" ] || fail "image user is '$user', not 65532:65532"
version=$("${RUN[@]}" "$TAG" --version) || fail "topofit --version failed in the container"
echo "topofit --version: $version"
[[ "$version" == *"$REVISION"* ]] || fail "--version does not report the revision $REVISION"
uid=$("${RUN[@]}" --entrypoint /usr/bin/id "$TAG" -u)
[ "$uid" = 65532 ] || fail "the container runs as uid $uid"
if "${RUN[@]}" --entrypoint /usr/bin/touch "$TAG" /usr/local/bin/probe 2>/dev/null; then
  fail "the root filesystem is writable"
fi
echo "build-image.sh: OK: $TAG runs topofit --version as uid 65532 on a read-only root filesystem"
