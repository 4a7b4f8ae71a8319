#!/usr/bin/env bash
# Run the collection's integration tests against a local NAC API emulator.
#
# usage: run_integration.sh COLLECTION_DIR [ansible-test integration args...]
#
# COLLECTION_DIR is the installed copy of the collection
# (.../ansible_collections/netaccess/nac). The emulator shipped in
# COLLECTION_DIR/tests/emulator is started on a free loopback port with
# tests/emulator/integration_config.json, COLLECTION_DIR/tests/integration/
# integration_config.yml is written for it, `ansible-test integration` runs,
# and the emulator is always stopped afterwards.
#
# Environment: PYTHON (interpreter for the emulator, default python3),
# TEST_PYTHON_VERSION (--python for ansible-test, default 3.11; ansible-test
# comes from PATH), NAC_TEST_* to override the test credentials below, and
# NAC_TEST_FORM: long (the default: every case) or short (every entry point,
# without the cases a target names as long), written to the targets as
# nac_test_form (ansible-test passes them no environment variable of ours).
set -euo pipefail

if [[ $# -lt 1 ]]; then
    echo "usage: $0 COLLECTION_DIR [ansible-test integration args...]" >&2
    exit 2
fi

coll="$(cd "$1" && pwd -P)"
shift
python="${PYTHON:-python3}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"

# shellcheck source-path=SCRIPTDIR source=emulator_lib.sh
source "${here}/emulator_lib.sh"

emulator="${coll}/tests/emulator/nac_emulator.py"
emulator_config="${coll}/tests/emulator/integration_config.json"
vars_file="${coll}/tests/integration/integration_config.yml"

if [[ ! -d "${coll}/tests/integration/targets" ]] || [[ -z "$(ls -A "${coll}/tests/integration/targets")" ]]; then
    echo "no integration targets in ${coll}/tests/integration/targets: nothing to run"
    exit 0
fi

# Test credentials: they must match tests/emulator/integration_config.json.
api_key="${NAC_TEST_API_KEY:-nac-demo-admin-key}"
api_key_noaccess="${NAC_TEST_API_KEY_NOACCESS:-nac-demo-noaccess-key}"
api_key_nopriv="${NAC_TEST_API_KEY_NOPRIV:-nac-demo-nopriv-key}"
username="${NAC_TEST_USERNAME:-svc-ansible}"
password="${NAC_TEST_PASSWORD:-nac-demo-password}"
tenant="${NAC_TEST_TENANT:-nac-demo-tenant}"
form="${NAC_TEST_FORM:-long}"
if [[ "${form}" != long && "${form}" != short ]]; then
    echo "NAC_TEST_FORM is '${form}': long or short" >&2
    exit 2
fi

emulator_args=(--quiet)
if [[ -f "${emulator_config}" ]]; then
    emulator_args+=(--config "${emulator_config}")
    for value in "${api_key}" "${api_key_noaccess}" "${api_key_nopriv}" "${username}" "${password}" "${tenant}"; do
        if ! grep -qF -- "${value}" "${emulator_config}"; then
            echo "WARNING: test credential '${value}' does not appear in ${emulator_config}" >&2
        fi
    done
else
    echo "WARNING: ${emulator_config} not found, the emulator runs with its built-in defaults" >&2
fi

# The browser test of the HTML reports (target html_report) needs Chromium: installed when missing, unless the
# targets named (arguments that are not options) leave that target out. A failed install only warns: the target
# then fails, saying what is missing.
targets=()
for arg in "$@"; do
    [[ "${arg}" == -* ]] || targets+=("${arg}")
done
if [[ -d "${coll}/tests/integration/targets/html_report" ]] \
    && { [[ ${#targets[@]} -eq 0 ]] || [[ " ${targets[*]} " == *" html_report "* ]]; }; then
    "${here}/install_chromium.sh" || echo "WARNING: Chromium is missing: the integration target html_report will fail" >&2
fi

emulator_start "${python}" "${emulator}" "${emulator_args[@]}"

# The file holds credentials: readable by the owner only.
(umask 077 && "${python}" - "${vars_file}" "${EMULATOR_URL}" "${api_key}" "${api_key_noaccess}" "${api_key_nopriv}" \
    "${username}" "${password}" "${tenant}" "${form}" <<'PY'
import json
import sys

path, url, key, key_noaccess, key_nopriv, username, password, tenant, form = sys.argv[1:]
values = {
    "nac_api_url": url,
    "nac_emulator_url": url,
    "nac_api_key": key,
    "nac_api_key_noaccess": key_noaccess,
    "nac_api_key_nopriv": key_nopriv,
    "nac_username": username,
    "nac_password": password,
    "nac_tenant": tenant,
    "nac_test_form": form,
}
with open(path, "w", encoding="utf-8") as handle:
    handle.write("---\n# Written by tests/tools/run_integration.sh for one run; do not commit.\n")
    for name, value in values.items():
        handle.write("%s: %s\n" % (name, json.dumps(value)))
PY
)

rc=0
(cd "${coll}" && ansible-test integration --local --python "${TEST_PYTHON_VERSION:-3.11}" --requirements "$@") || rc=$?
rm -f "${vars_file}"

if [[ ${rc} -ne 0 ]]; then
    emulator_show_log
fi
exit "${rc}"
