#!/usr/bin/env bash
# Run playbooks/demo.yml against a local NAC API emulator with its built-in
# defaults, then stop the emulator.
#
# usage: run_demo.sh [ansible-playbook args...]     (run from the repository root)
#
# Environment: PYTHON (interpreter for the emulator, default python3),
# ANSIBLE_COLLECTIONS_PATH (where netaccess.nac is installed), NAC_API_KEY
# (default nac-demo-admin-key). NAC_API_URL is set to the emulator's address.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
root="$(cd "${here}/../.." && pwd -P)"
python="${PYTHON:-python3}"

# shellcheck source-path=SCRIPTDIR source=emulator_lib.sh
source "${here}/emulator_lib.sh"

emulator_start "${python}" "${root}/tests/emulator/nac_emulator.py" --quiet

export NAC_API_URL="${EMULATOR_URL}"
export NAC_API_KEY="${NAC_API_KEY:-nac-demo-admin-key}"
# Readable output: multi-line strings (the status report) as YAML blocks, no skipped tasks.
export ANSIBLE_CALLBACK_RESULT_FORMAT="${ANSIBLE_CALLBACK_RESULT_FORMAT:-yaml}"
export ANSIBLE_DISPLAY_SKIPPED_HOSTS="${ANSIBLE_DISPLAY_SKIPPED_HOSTS:-false}"
export NAC_DEMO_REPORT_DIR="${NAC_DEMO_REPORT_DIR:-${root}/build/demo-report}"
echo "NAC emulator listening on ${NAC_API_URL}"

rc=0
(cd "${root}" && ansible-playbook playbooks/demo.yml "$@") || rc=$?
if [[ ${rc} -ne 0 ]]; then
    emulator_show_log
fi
exit "${rc}"
