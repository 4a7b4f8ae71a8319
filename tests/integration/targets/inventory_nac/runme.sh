#!/usr/bin/env bash
# The inventory plugin end to end, against emulators of its own (its request counters must be exact); then its
# host variables on their way through AWX (ansible-inventory --list --export --output, read with json.load).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" inventory_check.py "${python}" "$@"
"${python}" awx_vars_check.py "${python}"
