#!/usr/bin/env bash
# Creates one virtual environment per interop peer under .interop/<name>/ from
# tests/interop/<name>/requirements.txt (their pins conflict, so each has its own).
# Idempotent: an environment whose stamp matches its requirements file is left as it is.
# Usage: scripts/interop_setup.sh [name ...]   (default: every peer)
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.8
ROOT=.interop
mkdir -p "$ROOT"

python=""
for candidate in python3 python3.13 python3.12 python3.14 python; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
    python=$(command -v "$candidate"); break
  fi
done
[ -n "$python" ] || { echo "Python 3.12 or newer is needed for the interop peers." >&2; exit 1; }

# uv resolves and installs several times faster than pip; it lives in an environment of its own.
uv="$ROOT/_uv/bin/uv"
if [ ! -x "$uv" ] || [ "$("$uv" --version | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  "$python" -m venv "$ROOT/_uv"
  "$ROOT/_uv/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi

if [ "$#" -gt 0 ]; then names=("$@"); else
  names=(); for file in tests/interop/*/requirements.txt; do names+=("$(basename "$(dirname "$file")")"); done
fi

for name in "${names[@]}"; do
  requirements="tests/interop/$name/requirements.txt"
  env="$ROOT/$name"
  stamp="$env/.requirements"
  if [ -x "$env/bin/python" ] && [ -f "$stamp" ] && cmp -s "$stamp" "$requirements"; then
    echo "interop: $name is up to date"; continue
  fi
  start=$SECONDS
  rm -rf "$env"
  "$uv" venv --quiet --python "$python" "$env"
  "$uv" pip install --quiet --python "$env/bin/python" -r "$requirements"
  cp "$requirements" "$stamp"
  echo "interop: $name installed in $((SECONDS - start)) s"
done
