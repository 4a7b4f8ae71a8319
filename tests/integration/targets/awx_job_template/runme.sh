#!/usr/bin/env bash
# An AWX job of playbooks/onboard_devices.yml, as AWX runs it: ansible-runner, a private data dir with the
# NAC credential injected (env/envvars, the CA file), extra variables; against an HTTPS emulator of its own.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" awx_job_check.py "${python}"
