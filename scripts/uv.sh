#!/usr/bin/env sh
# Run uv, installing it first (into .tools/, with pip) on a machine that only has python3 and pip.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
if command -v uv >/dev/null 2>&1; then
  exec uv "$@"
fi
if [ ! -x "$here/.tools/bin/uv" ]; then
  python3 -m venv "$here/.tools"
  "$here/.tools/bin/python" -m pip install --quiet --disable-pip-version-check uv
fi
exec "$here/.tools/bin/uv" "$@"
