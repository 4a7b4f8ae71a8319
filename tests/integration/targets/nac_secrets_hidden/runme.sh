#!/usr/bin/env bash
# Every module run, successful or failing, at -vvv: no credential may appear anywhere in the output.
set -euo pipefail

config=../../integration_config.yml
python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
output="$(mktemp)"
trap 'rm -f "${output}"' EXIT

setting() {
    "${python}" -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))[sys.argv[2]])' "${config}" "$1"
}

run() {
    ansible-playbook -vvv -i localhost, -c local -e "ansible_python_interpreter=${python}" "$@" >>"${output}" 2>&1 || {
        cat "${output}"
        echo "ansible-playbook $* failed" >&2
        exit 1
    }
}

# Credentials as module options, good and bad.
run -e "@${config}" secrets.yml
# Credentials from the environment of the controller process, as an AWX/Tower credential injects them.
# (The task keyword 'environment:' is not for secrets: Ansible itself shows it at -vvv.)
NAC_API_URL="$(setting nac_api_url)" NAC_USERNAME="$(setting nac_username)" NAC_PASSWORD="$(setting nac_password)" \
    NAC_TENANT="$(setting nac_tenant)" run from_environment.yml

leaks=0
while IFS= read -r secret; do
    [[ -n "${secret}" ]] || continue
    if grep -qF -- "${secret}" "${output}"; then
        echo "A credential (${#secret} characters) appears in the -vvv output:" >&2
        grep -nF -- "${secret}" "${output}" | sed "s/${secret}/<CREDENTIAL>/g" | head -5 >&2
        leaks=$((leaks + 1))
    fi
done < <("${python}" -c '
import sys, yaml
config = yaml.safe_load(open(sys.argv[1]))
for key in ("nac_api_key", "nac_api_key_nopriv", "nac_password", "nac_tenant"):
    print(config[key])
print("wrong-key-5ecret-0123456789")
print("wrong-pa55word-0123456789")
print("wrong-tenant-0123456789")
' "${config}")

if [[ ${leaks} -ne 0 ]]; then
    exit 1
fi
grep -q "Server error" "${output}"  # the failing runs did run and were reported
echo "no credential in $(wc -l <"${output}") lines of -vvv output"
