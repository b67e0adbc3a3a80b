#!/usr/bin/env bash
# Build the peer venv for the opt-in interop tests (pytest -m peer): Python 3.12 with the
# real openhands-agent-server 1.58.0 (and openhands-sdk), installed with uv from PyPI.
#
#   scripts/peer-agent-server.sh [DIR]        # default DIR: ./.peer (outside git: see .gitignore)
#   OHTUI_PEER_PYTHON=DIR/v312/bin/python .venv/bin/pytest -m peer
#
# Needs python3.12 on PATH (or PYTHON312=/path/to/python3.12). About 560 MB; ~20 s with uv.
set -euo pipefail

DIR="${1:-.peer}"
PY312="${PYTHON312:-python3.12}"
VERSION="${OPENHANDS_AGENT_SERVER_VERSION:-1.58.0}"

if ! command -v "$PY312" >/dev/null 2>&1; then
    echo "error: $PY312 not found; install Python 3.12 or set PYTHON312=/path/to/python3.12" >&2
    exit 2
fi
mkdir -p "$DIR"
"$PY312" -m venv "$DIR/v312"
python3 -m venv "$DIR/uvenv"
"$DIR/uvenv/bin/pip" install --quiet uv
CERTS=/etc/ssl/certs/ca-certificates.crt
if [ -f "$CERTS" ] && [ -z "${SSL_CERT_FILE:-}" ]; then
    export SSL_CERT_FILE="$CERTS"
fi
"$DIR/uvenv/bin/uv" pip install --python "$DIR/v312/bin/python" \
    "openhands-agent-server==$VERSION"
"$DIR/v312/bin/python" - <<'PY'
from importlib.metadata import version
print("openhands-agent-server", version("openhands-agent-server"))
print("openhands-sdk", version("openhands-sdk"))
PY
echo "done: export OHTUI_PEER_PYTHON=$(cd "$DIR" && pwd)/v312/bin/python"
