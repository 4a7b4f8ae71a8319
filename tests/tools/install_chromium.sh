#!/usr/bin/env bash
# Make sure that Debian's chromium is installed: the integration target html_report opens the HTML reports in
# it, headless. When it is missing, installs it with apt-get (as root, as CI runs on a fresh machine: about
# 350 MB, some 20 s after the package lists), saying so; where that cannot be done, says what to install.
# Exit status 0 when chromium is there afterwards. Called by run_integration.sh.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
echo "    the browser test of the HTML report (target html_report) needs Chromium: installing Debian's chromium"
if [[ "$(id -u)" -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    echo "    cannot install it here (that needs root and apt-get): install the package chromium," \
        "or the integration target html_report fails" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
started=${SECONDS}
if ! { apt-get update -qq && apt-get install -y -qq chromium; } >/tmp/install-chromium.log 2>&1; then
    tail -n 20 /tmp/install-chromium.log >&2
    echo "    apt-get could not install chromium (above); the integration target html_report will fail" >&2
    exit 1
fi
echo "    $(chromium --version 2>/dev/null | head -n 1) installed in $(( SECONDS - started )) s"
