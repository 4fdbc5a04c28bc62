#!/usr/bin/env bash
# usage: check-dockerfile-libs.sh TOPOFIT_BINARY DOCKERFILE
# The runtime stage of the Dockerfile installs only the packages listed between
# "# runtime-packages-begin" and "# runtime-packages-end". Every shared library `ldd` reports for the
# binary must come from one of them, from a package they depend on (apt installs those too), or from
# a package debian:bookworm-slim already has (Priority required, or libstdc++6/libgcc-s1 which apt
# itself needs). Libraries are mapped to packages with dpkg -S, so this must run on Debian 12, the
# release of both Dockerfile stages.
set -euo pipefail
bin=${1:?usage: $0 TOPOFIT_BINARY DOCKERFILE}
dockerfile=${2:?usage: $0 TOPOFIT_BINARY DOCKERFILE}
command -v dpkg >/dev/null || { echo "skip: dpkg not available"; exit 0; }
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }') || { echo "FAIL: ldd $bin" >&2; exit 1; }
[ -n "$libs" ] || { echo "FAIL: ldd lists no libraries for $bin" >&2; exit 1; }

listed=$(sed -n '/# runtime-packages-begin/,/# runtime-packages-end/p' "$dockerfile" |
         grep -v '#' | tr -d '\\' | xargs -n1 | sort -u)
[ -n "$listed" ] || { echo "FAIL: no runtime package list in $dockerfile" >&2; exit 1; }

# Packages apt brings in with the listed ones: the Depends closure, as installed here.
declare -A closure=()
queue=($listed)
while ((${#queue[@]})); do
  p=${queue[0]}; queue=("${queue[@]:1}")
  [ -n "${closure[$p]:-}" ] && continue
  closure[$p]=1
  deps=$(dpkg-query -W -f='${Depends},${Pre-Depends}' "$p" 2>/dev/null || true)
  for d in $(echo "$deps" | tr ',|' '\n\n' | sed 's/(.*)//; s/:any//' | xargs -n1 2>/dev/null); do
    [ -z "${closure[$d]:-}" ] && queue+=("$d")
  done
done

status=0
while read -r soname path; do
  owner=""
  for candidate in "$path" "$(readlink -f "$path")" "/usr$path" "${path#/usr}"; do
    owner=$(dpkg -S "$candidate" 2>/dev/null | head -1 | cut -d: -f1) && [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    echo "FAIL: $soname ($path) belongs to no Debian package" >&2; status=1; continue
  fi
  priority=$(dpkg-query -W -f='${Priority}' "$owner" 2>/dev/null || true)
  if [ -n "${closure[$owner]:-}" ]; then
    echo "ok: $soname <- $owner (listed or a dependency)"
  elif [ "$priority" = required ] || [ "$owner" = libstdc++6 ] || [ "$owner" = libgcc-s1 ]; then
    echo "ok: $soname <- $owner (in debian:bookworm-slim)"
  else
    echo "FAIL: $soname <- $owner is not installed by the Dockerfile's runtime stage" >&2; status=1
  fi
done <<< "$libs"
[ $status -eq 0 ] && echo "PASS: every library of $(basename "$bin") is in the runtime image"
exit $status
