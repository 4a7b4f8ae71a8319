#!/usr/bin/env bash
# The role onboards a mixed fleet (devices with a MAC expected AUTHENTICATED, devices without one
# expected UNAUTHENTICATED) with a report; a rerun of the same play changes nothing: changed=0 in the
# play recap, the same report files, and what the run did is in the task output instead.
set -euo pipefail

python="${ANSIBLE_TEST_PYTHON_INTERPRETER:-$(command -v python3)}"
report="$(mktemp -d)"
trap 'rm -rf "${report}"' EXIT

play() {
    ansible-playbook -i localhost, -c local -e "ansible_python_interpreter=${python}" \
        -e @../../integration_config.yml -e "fleet_report=${report}" fleet.yml "$@"
}

recap() {  # the PLAY RECAP line of localhost
    grep -E '^localhost +: ok=' <<<"$1"
}

first="$(play -e fleet_first_run=true "$@")" || { echo "${first}"; exit 1; }
echo "${first}"
grep -q '3 created by this run, 1 already present' <<<"${first}"
digest="$(cd "${report}" && sha256sum device_onboarding.csv device_onboarding.md)"

second="$(play "$@")" || { echo "${second}"; exit 1; }
echo "${second}"
grep -q '0 created by this run, 4 already present' <<<"${second}"
if ! recap "${second}" | grep -qE ' changed=0 .* failed=0 '; then
    echo "the rerun is not change-free: $(recap "${second}")" >&2
    exit 1
fi
if [[ "$(cd "${report}" && sha256sum device_onboarding.csv device_onboarding.md)" != "${digest}" ]]; then
    echo "the rerun rewrote the report files" >&2
    exit 1
fi
echo "rerun: $(recap "${second}")"
