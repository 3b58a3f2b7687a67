#!/usr/bin/env sh
# Run uv, installing it first (into .tools/, with pip) on a machine that only has python3 and pip.
# The version is pinned: uv's cache of built wheels is per version, and a newer uv would rebuild
# llama-cpp-python from source (~9 min) on every clean clone.
set -eu
UV_VERSION=0.13.9
here=$(cd "$(dirname "$0")/.." && pwd)
if command -v uv >/dev/null 2>&1; then
  exec uv "$@"
fi
if [ ! -x "$here/.tools/bin/uv" ]; then
  python3 -m venv "$here/.tools"
  "$here/.tools/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
fi
exec "$here/.tools/bin/uv" "$@"
