#!/usr/bin/env bash
# Installs the Debian packages topofit needs to build and test, skipping those already present.
# Run as root on Debian 12 (bookworm) or newer. Safe to run again.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libcpp-httplib-dev nlohmann-json3-dev libboost-dev libboost-graph-dev libfmt-dev doctest-dev
  libsimdjson-dev libcli11-dev libyaml-cpp-dev libssl-dev libbenchmark-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
)
# Extra packages for optional parts, named by the caller: e.g. `install-deps.sh plots`.
for extra in "$@"; do
  case "$extra" in
    plots) PACKAGES+=(gnuplot-nox) ;;
    fuzz) PACKAGES+=(clang libclang-rt-14-dev) ;;
    e2e) PACKAGES+=(golang-go curl python3-yaml) ;;
    browser) PACKAGES+=(chromium) ;;
    *) echo "install-deps.sh: unknown extra '$extra'" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "Installing: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
