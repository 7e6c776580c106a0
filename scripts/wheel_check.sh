#!/usr/bin/env bash
# Build the wheel, install it into a clean virtualenv outside the checkout, and run the demo
# from it: what a user installing the package gets, not what the checkout's src/ holds.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$PYTHON" -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" .
wheel="$(ls "$work"/dist/adk_lattice-*.whl)"
"$PYTHON" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --upgrade pip
"$work/venv/bin/python" -m pip install --quiet "${wheel}[tracing,pii]"

cp -r examples/billing "$work/demo"
cd "$work"
where="$("$work/venv/bin/python" -c 'import adk_lattice, os; print(os.path.dirname(adk_lattice.__file__))')"
case "$where" in
  "$work"/venv/*) ;;
  *) echo "wheel check: adk_lattice imported from $where, not the wheel" >&2; exit 1 ;;
esac
out="$("$work/venv/bin/python" demo/main.py)"
grep -q "outcome=completed" <<<"$out" || { echo "$out" >&2; echo "wheel check: the demo did not complete" >&2; exit 1; }
echo "wheel check: $(basename "$wheel") installed in a clean virtualenv; the demo ran from it"
