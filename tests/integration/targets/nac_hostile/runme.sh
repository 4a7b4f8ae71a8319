#!/usr/bin/env bash
# A hostile NAC (the emulator's hostile mode) against every entry point: no canary command runs, every report
# reads back to the server's values, no raw control character and no fragment of a secret in any output, and the
# memory of a module that lists an endless list stays bounded. hostile_check.py starts its own emulators.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
# The short form (nac_test_form, written by run_integration.sh) leaves out the echoed credentials (masking) and the
# endless list (memory): the client's own logic, the same on every core. Every entry point runs in both forms.
form="$(sed -n 's/^nac_test_form: "\(.*\)"$/\1/p' ../../integration_config.yml 2>/dev/null || true)"
if [[ "${form}" == short && -z "${NAC_HOSTILE_STEPS:-}" ]]; then
    export NAC_HOSTILE_STEPS=modules,role,inventory,eda
fi
"${python}" hostile_check.py "${python}"
