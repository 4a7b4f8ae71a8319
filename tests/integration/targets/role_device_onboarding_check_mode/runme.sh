#!/usr/bin/env bash
# The role under --check --diff: reports what it would create, sends no write, checks the existing devices.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
ansible-playbook --check --diff -i localhost, -c local -e "ansible_python_interpreter=${python}" \
    -e @../../integration_config.yml check_mode.yml "$@"
