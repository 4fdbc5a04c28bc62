#!/usr/bin/env bash
# The README's "Where each decision lives" table is right: every file it names exists, and every
# function it names is defined in one of that row's files (`Class::Name(` or `Name(` at a definition).
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=$(awk '/^### Where each decision lives/{on=1; next} on && /^\| .* \| `/{print} on && /^## /{exit}' README.md \
       | grep -v '^| decision |')
[ -n "$rows" ] || { echo "README.md: no 'Where each decision lives' table found"; exit 1; }
fail=0 count=0
while IFS= read -r row; do
  files_cell=$(echo "$row" | awk -F'|' '{print $3}')
  funcs_cell=$(echo "$row" | awk -F'|' '{print $4}')
  dir=""
  files=()
  for f in $(echo "$files_cell" | grep -o '`[^`]*`' | tr -d '`'); do
    # "extender/placement/pipeline.cc, `cluster_model.cc`": a bare name lives beside the previous one.
    if [[ "$f" == */* ]]; then dir=$(dirname "$f"); else f="$dir/$f"; fi
    [ -f "$f" ] || { echo "README.md: no file $f (row: $row)"; fail=1; continue; }
    files+=("$f")
  done
  for fn in $(echo "$funcs_cell" | grep -o '`[^`]*`' | tr -d '`'); do
    [ "$fn" = "..." ] && continue
    count=$((count + 1))
    if ! grep -qE "(^|[ *&:])${fn//::/::}\(" "${files[@]}" </dev/null; then
      echo "README.md: $fn is not defined in ${files[*]}"
      fail=1
    fi
  done
done <<< "$rows"
echo "checked $count functions"
exit $fail
