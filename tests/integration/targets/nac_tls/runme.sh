#!/usr/bin/env bash
# TLS end to end: the emulator serves HTTPS with a self-signed certificate made for this run.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" tls_check.py "${python}" "$@"
