#!/usr/bin/env python3
"""Lists the C++ functions of the tree longer than a limit, longest first.

  function_lengths.py [--max N] [--files-max M] ROOT...

A function is a body in braces whose header (the text since the last ';', '{' or '}' at the same depth)
has a parameter list and is not a class, struct, enum, namespace, union, lambda or initializer; its length
counts the lines from the header's first line to the closing brace. Member functions defined inside a
class body count too; lambdas count as part of the function that holds them. Strings, character literals,
raw strings and comments are skipped. Tests (`*_test.cc`, `*_perftest.cc`, `*_fuzz.cc`), test folders
(`testing/`, `test/`) and generated files are left out: the rule is for the code that ships.

With --max N it exits 1 when a function is longer than N lines (or, with --files-max M, a file longer
than M lines), printing each offender as `path:line: name N lines`; parsers' state machines may be named
in ALLOWED below, each with its reason.
"""
import argparse
import os
import re
import sys

# Functions allowed over the limit, with the reason: parsers' state machines, whose states read best as one
# switch.
ALLOWED = {
    "extender/k8s/list_stream.cc:ListStream::Scan": "the byte-level state machine of a streamed list",
    "extender/k8s/quantity.cc:ParseQuantity": "the grammar of a Kubernetes quantity, one production a branch",
}

SKIP_FILE = re.compile(r"(_test|_perftest|_fuzz)\.cc$")
SKIP_DIR = {"testing", "test", "build", "ui", "testdata", "proto"}
NOT_FUNCTION = re.compile(r"\b(class|struct|enum|namespace|union)\b|=\s*$|^\s*$|\]\s*(\(.*\))?\s*"
                          r"(mutable\s*)?(->\s*[\w:<>, ]+)?$|\b(if|for|while|switch|catch|do|else)\b\s*(\(|$)")


def strip(text):
  """Text with comments, strings and char literals blanked (newlines kept)."""
  out = []
  i, n = 0, len(text)
  while i < n:
    c = text[i]
    if text.startswith("//", i):
      j = text.find("\n", i)
      j = n if j < 0 else j
      i = j
    elif text.startswith("/*", i):
      j = text.find("*/", i + 2)
      j = n if j < 0 else j + 2
      out.append("\n" * text.count("\n", i, j))
      i = j
    elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
      m = re.match(r'R"([^(\s]*)\(', text[i:])
      if not m:
        out.append(c)
        i += 1
        continue
      end = text.find(")" + m.group(1) + '"', i)
      end = n if end < 0 else end + len(m.group(1)) + 2
      out.append('""' + "\n" * text.count("\n", i, end))
      i = end
    elif c in "\"'":
      j = i + 1
      while j < n and text[j] != c:
        j += 2 if text[j] == "\\" else 1
      if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
        out.append(" ")
        i += 1
        continue
      out.append(c + c)
      i = j + 1
    else:
      out.append(c)
      i += 1
  return "".join(out)


def functions(path):
  text = strip(open(path, encoding="utf-8", errors="replace").read())
  stack = []  # (kind, start_line, name)
  header_start = 0
  line = 1
  header_line = 1
  found = []
  for i, c in enumerate(text):
    if c == "\n":
      line += 1
      continue
    if c in ";{}":
      header = text[header_start:i]
      if c == "{":
        in_function = any(kind == "f" for kind, _, _ in stack)
        is_func = not in_function and "(" in header and not NOT_FUNCTION.search(header)
        if is_func:
          m = re.search(r"([~\w:<>=!+\-*/\[\]&|^%]+)\s*\(", header)
          name = m.group(1) if m else "?"
          lead = len(header) - len(header.lstrip("\n \t"))
          first = header_line + header[:lead].count("\n")
          stack.append(("f", first, name))
        else:
          stack.append(("b", line, ""))
      elif c == "}":
        if stack:
          kind, start, name = stack.pop()
          if kind == "f":
            found.append((name, start, line - start + 1))
      header_start = i + 1
      header_line = line
  return found, line


def sources(roots):
  for root in roots:
    if os.path.isfile(root):
      yield root
      continue
    for dirpath, dirnames, filenames in os.walk(root):
      dirnames[:] = [d for d in dirnames if d not in SKIP_DIR and not d.startswith(("build", "."))]
      for f in filenames:
        if f.endswith((".cc", ".h")) and not SKIP_FILE.search(f):
          yield os.path.join(dirpath, f)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--max", type=int, default=0)
  ap.add_argument("--files-max", type=int, default=0)
  ap.add_argument("roots", nargs="+")
  args = ap.parse_args()
  long_functions, long_files = [], []
  for path in sources(args.roots):
    found, lines = functions(path)
    for name, start, length in found:
      long_functions.append((length, path, start, name))
    if args.files_max and lines > args.files_max:
      long_files.append((lines, path))
  long_functions.sort(reverse=True)
  bad = 0
  for length, path, start, name in long_functions:
    if args.max and length <= args.max:
      break
    allowed = ALLOWED.get(f"{path}:{name}")
    print(f"{path}:{start}: {name} {length} lines" + (f" (allowed: {allowed})" if allowed else ""))
    if not allowed:
      bad += 1
    if not args.max and len(long_functions) > 40 and length < long_functions[39][0]:
      break
  for lines, path in sorted(long_files, reverse=True):
    print(f"{path}: file of {lines} lines")
    bad += 1
  if args.max:
    print(f"function_lengths: {bad} over the limits (functions {args.max} lines, files {args.files_max or '-'})")
  return 1 if args.max and bad else 0


if __name__ == "__main__":
  sys.exit(main())
