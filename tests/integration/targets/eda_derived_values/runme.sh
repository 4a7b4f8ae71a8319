#!/usr/bin/env bash
# A playbook that decodes event fields (b64decode, urldecode, NFKC), keeps them with set_fact, uses them and loops
# over them: no server string runs (derived_check.py starts its own emulator).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" derived_check.py "${python}"
