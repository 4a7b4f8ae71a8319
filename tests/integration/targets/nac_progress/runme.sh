#!/usr/bin/env bash
# Progress of long work end to end: ansible-playbook's output, ansible-inventory --list (JSON on stdout, the lines
# on stderr), and the events of an AWX job (ansible-runner).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" progress_check.py "${python}"
