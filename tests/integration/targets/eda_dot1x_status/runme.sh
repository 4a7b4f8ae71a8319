#!/usr/bin/env bash
# A real ansible-rulebook runs rulebook.yml with the event source against an emulator of its own
# (eda_check.py starts it, flips a device, and checks the rules that fired and the output).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" eda_check.py
