#!/usr/bin/env bash
# The README's Layout table and every link into docs/ are right:
#   - every path the Layout names exists, and every top-level folder and every part of extender/ (a folder
#     with a CMakeLists.txt) has its row;
#   - the docs/ row names every document in docs/;
#   - every docs/<file> named in the README, in docs/ or in a source comment is a file of docs/;
#   - every relative Markdown link of the README and of docs/ (an image too) leads to a file.
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=$(awk '/^## Layout/{on=1; next} on && /^## /{exit} on && /^\| `/{print}' README.md)
[ -n "$rows" ] || { echo "README.md: no Layout table found"; exit 1; }
fail=0
paths=$(echo "$rows" | awk -F'|' '{print $2}' | tr -d ' `')
for p in $paths; do
  [ -e "$p" ] || { echo "README.md Layout: $p does not exist"; fail=1; }
done
want=$(git ls-files | awk -F/ 'NF>1 && $1 !~ /^\./ {print $1"/"}' | sort -u)
want=$(echo "$want" | grep -vx 'extender/')
want+=$'\n'$(git ls-files 'extender/*/CMakeLists.txt' | awk -F/ 'NF==3 {print $1"/"$2"/"}')
for w in $want; do
  echo "$paths" | grep -qxF "$w" || { echo "README.md Layout: no row for $w"; fail=1; }
done
docs_row=$(echo "$rows" | grep '^| `docs/`')
for d in docs/*.md; do
  echo "$docs_row" | grep -qF "$(basename "$d")" || { echo "README.md Layout: the docs/ row does not name $d"; fail=1; }
done
count=0
while IFS=: read -r file ref; do
  count=$((count + 1))
  [ -f "$ref" ] || { echo "$file: names $ref, which is not in the repository"; fail=1; }
done < <(git ls-files | grep -vE '^(\.|test/e2e/go\.sum)' |
         xargs grep -oE 'docs/[A-Za-z0-9_.-]+\.(md|png|svg|jpg|csv|txt|json)' 2>/dev/null | sort -u)
links=0
while IFS=: read -r file link; do
  links=$((links + 1))
  target=${link#*](}
  target=${target%)}
  target=${target%%#*}
  [ -e "$(dirname "$file")/$target" ] || { echo "$file: links to $target, which is not there"; fail=1; }
done < <(grep -oE '\]\([^)#:[:space:]][^):[:space:]]*\)' README.md docs/*.md /dev/null | sort -u)
echo "checked $(echo "$paths" | wc -w) Layout rows, $count links into docs/ and $links relative Markdown links"
exit $fail
