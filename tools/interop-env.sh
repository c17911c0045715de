#!/usr/bin/env bash
# The Python environment of span's interop tests (issue 34): a venv OUTSIDE the clone, in a cache
# folder that later runs on the same machine reuse, keyed by a hash of tools/interop-requirements.txt
# (a changed list makes a new venv; a new machine makes it again). Installs the list by name with
# pip (the index pip is configured with), then prints one line per package with its version, or
# one line saying why it is not there and that the tests needing it skip. Always exits 0: a
# missing package skips tests, it does not fail CI. Span itself never depends on Python.
#   tools/interop-env.sh            # or: npm run interop
#   tools/interop-env.sh --path     # print the venv's folder only (test/helpers/interop.ts computes the same)
# SPAN_INTEROP_CACHE: the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/span-interop).
# The skip path, with a fresh cache and pip pointed nowhere (no config, no find-links, a dead index):
#   SPAN_INTEROP_CACHE=/tmp/x PIP_CONFIG_FILE=/dev/null PIP_FIND_LINKS= PIP_INDEX_URL=file:///nonexistent \
#     PIP_EXTRA_INDEX_URL= tools/interop-env.sh    # one "not installed (pip: ERROR: ...)" line per package
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
req=$here/tools/interop-requirements.txt
key=$(sha256sum "$req" | cut -c1-16)
cache=${SPAN_INTEROP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/span-interop}
venv=$cache/venv-$key
if [ "${1:-}" = "--path" ]; then
  echo "$venv"
  exit 0
fi
t0=$(date +%s)
names=$(sed -e 's/#.*//' -e 's/[<>=!~ ].*//' "$req" | grep -v '^$')
say() { echo "interop: $*"; }

if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$cache" && rm -rf "$venv.partial"
  if ! err=$(python3 -m venv "$venv.partial" 2>&1); then
    say "cannot make a venv in $venv ($(echo "$err" | tail -1)): every interop test skips"
    exit 0
  fi
  mv "$venv.partial" "$venv"
fi
py=$venv/bin/python
# "name version" per package of the list ("name -" when absent), from one Python start.
versions() {
  # shellcheck disable=SC2086
  "$py" -c '
import sys, importlib.metadata as m
for n in sys.argv[1:]:
    try: print(n, m.version(n))
    except Exception: print(n, "-")' $names 2> /dev/null
}
# The packages of the list not in the venv yet (all of them on a cold cache, none on a warm one).
missing=$(versions | awk '$2 == "-" { printf " %s", $1 }')
declare -A why
if [ -n "$missing" ]; then
  say "installing$missing into $venv"
  # One pip run for all (one resolution); when it fails, each on its own, to say which one cannot.
  # shellcheck disable=SC2086
  if ! "$py" -m pip install -q --retries 1 -r "$req" > "$venv/pip.log" 2>&1; then
    for n in $missing; do
      spec=$(grep -E "^$n([<>=!~ ]|$)" "$req")
      if ! "$py" -m pip install -q --retries 1 "$spec" > "$venv/pip-$n.log" 2>&1; then
        why[$n]=$(grep -E 'ERROR|error' "$venv/pip-$n.log" | head -1 | cut -c1-160)
      fi
    done
  fi
fi
while read -r n v; do
  if [ "$v" != "-" ]; then
    say "$n $v"
  else
    say "$n not installed (pip: ${why[$n]:-see $venv/pip.log}): the tests needing it skip"
  fi
done < <(versions)
say "done in $(($(date +%s) - t0)) s ($venv)"
