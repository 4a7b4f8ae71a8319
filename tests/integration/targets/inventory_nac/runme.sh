#!/usr/bin/env bash
# The inventory plugin end to end, against an emulator of its own (its request counters must be exact).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" inventory_check.py "${python}" "$@"
