#!/usr/bin/env bash
# The HTML reports of the role and of dot1x_report, from a hostile NAC, checked in headless Chromium
# (Debian's chromium: tests/tools/install_chromium.sh, which run_integration.sh runs, installs it).
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
# The form run_integration.sh asked for (nac_test_form): the short one leaves out the page of 20,000 devices.
NAC_TEST_FORM="$(sed -n 's/^nac_test_form: "\(.*\)"$/\1/p' ../../integration_config.yml 2>/dev/null || true)"
export NAC_TEST_FORM
"${python}" html_report_check.py "${python}" "$@"
