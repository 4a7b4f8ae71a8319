#!/usr/bin/env bash
# A hostile NAC (the emulator's hostile mode) against every entry point: no canary command runs, every report
# reads back to the server's values, no raw control character and no fragment of a secret in any output, and the
# memory of a module that lists an endless list stays bounded. hostile_check.py starts its own emulators.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" hostile_check.py "${python}"
