#!/usr/bin/env bash
# The HTML reports of the role and of dot1x_report, from a hostile NAC, checked in headless Chromium
# (Debian's chromium: tests/tools/install_chromium.sh, which run_integration.sh runs, installs it).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
"${python}" html_report_check.py "${python}" "$@"
