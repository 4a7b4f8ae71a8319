#!/usr/bin/env bash
# Run one ansible-test stage (sanity, units or integration) in the installed copy of the collection with
# the ansible-test on PATH (the Makefile puts the virtual environment of one ansible-core first), and keep
# its results, because every ansible-core version writes to the same COLLECTION_DIR/tests/output.
#
# usage: ansible_test_stage.sh STAGE COLLECTION_DIR PYTHON_VERSION RESULTS_DIR [INTEGRATION_ARGS...]
#
#   STAGE           sanity, units or integration
#   COLLECTION_DIR  the installed copy (.../ansible_collections/netaccess/nac), shared by every version
#   PYTHON_VERSION  X.Y, passed to ansible-test as --python (the interpreter of that virtual environment)
#   RESULTS_DIR     where the stage's junit files and data files are copied (RESULTS_DIR/junit, /data) with a line
#                   naming the ansible-core and Python (RESULTS_DIR/version); integration also writes each
#                   target's seconds there (RESULTS_DIR/targets.tsv: target, seconds), for the summary
#   INTEGRATION_ARGS  more arguments for run_integration.sh (integration only), e.g. NAC_TEST_FORM=short
#
# tests/output is emptied first, so what is copied is this stage's own. sanity writes a junit file per
# sanity test (--junit); units, pytest's junit file; integration, ansible-test's data file (the targets
# that passed) and, with --continue-on-error, runs every target even after one failed. The exit status is
# ansible-test's. Environment: PYTHON (the emulator's interpreter, see run_integration.sh).
set -euo pipefail

if [[ $# -lt 4 ]]; then
    echo "usage: $0 sanity|units|integration COLLECTION_DIR PYTHON_VERSION RESULTS_DIR [INTEGRATION_ARGS...]" >&2
    exit 2
fi
stage="$1"
coll="$(cd "$2" && pwd -P)"
python_version="$3"
results="$4"
shift 4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"

ansible_test="$(command -v ansible-test)"
# The interpreter of the virtual environment that holds this ansible-test.
test_python="$(dirname "${ansible_test}")/python"

get_pip_standin() {
    # ansible-test bootstraps pip into the virtual environments of its sanity tests with a get-pip script
    # that it downloads from a host CI cannot reach, unless the script is in its cache already: put the
    # offline stand-in there, under the name this ansible-test and this Python look for.
    local pip_version cache
    pip_version="$("${test_python}" - "${python_version}" <<'PY'
import sys
from types import SimpleNamespace

from ansible_test._internal.python_requirements import get_venv_packages

print(get_venv_packages(SimpleNamespace(version=sys.argv[1]))["pip"])
PY
)"
    cache="${HOME}/.ansible/test/cache/get_pip_${pip_version//./_}.py"
    if [[ ! -s "${cache}" ]]; then
        mkdir -p "$(dirname "${cache}")"
        cp "${here}/get_pip_standin.py" "${cache}"
    fi
}

first_run_state() {
    # What ansible-test makes for the user on its first run, made here once, under a lock: stages run side by side
    # (make test), and two first runs at once both make its SSH key pair, the second stopping on ssh-keygen's
    # question whether to overwrite the first's. The same command and file names as ansible-test's (core_ci.py).
    local dir="${HOME}/.ansible/test"
    mkdir -p "${dir}"
    (
        flock 9
        if [[ ! -f "${dir}/id_rsa" || ! -f "${dir}/id_rsa.pub" ]]; then
            rm -f "${dir}/id_rsa" "${dir}/id_rsa.pub"
            ssh-keygen -m PEM -q -t rsa -N '' -f "${dir}/id_rsa"
            sed -i -E 's/(BEGIN|END) PRIVATE KEY/\1 RSA PRIVATE KEY/' "${dir}/id_rsa"
        fi
    ) 9>"${dir}/.first-run.lock"
}

sanity_progress() {
    # ansible-test sanity's "Running sanity test "pylint" on Python 3.13" as a progress line with the seconds since
    # the stage started, "    sanity test pylint on Python 3.13 (48 s)", and without its blank lines.
    local line pattern='^Running sanity test "([^"]+)"(.*)$'
    while IFS= read -r line; do
        if [[ "${line}" =~ ${pattern} ]]; then
            printf '    sanity test %s%s (%d s)\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$(( SECONDS - started ))"
        elif [[ -n "${line}" ]]; then
            printf '%s\n' "${line}"
        fi
    done
}

integration_times() {
    # Passes ansible-test integration's output through and writes, at each "Running TARGET integration test ..."
    # line and at the end, the seconds of the target before it to targets.tsv.
    local line target="" began=${SECONDS} pattern='^Running ([A-Za-z0-9_]+) integration test'
    while IFS= read -r line; do
        if [[ "${line}" =~ ${pattern} ]]; then
            [[ -z "${target}" ]] || printf '%s\t%d\n' "${target}" "$(( SECONDS - began ))" >>"${results}/targets.tsv"
            target="${BASH_REMATCH[1]}" began=${SECONDS}
        fi
        printf '%s\n' "${line}"
    done
    [[ -z "${target}" ]] || printf '%s\t%d\n' "${target}" "$(( SECONDS - began ))" >>"${results}/targets.tsv"
}

rm -rf "${coll}/tests/output" "${results}"
mkdir -p "${results}"
first_run_state
# What ran: "ansible-core 2.21.5 / Python 3.13.0", for the summary.
"${test_python}" -c 'import platform, sys; from ansible.release import __version__ as v; print("ansible-core %s / Python %s" % (v, platform.python_version()))' \
    >"${results}/version"
rc=0
case "${stage}" in
    sanity)
        get_pip_standin
        started=${SECONDS}
        # One sanity run per Python at a time: ansible-test makes the virtual environments of its sanity tests in
        # ~/.ansible/test/venv, named by Python and requirements, which two versions on one Python may share.
        (
            flock 9
            cd "${coll}" && ansible-test sanity --local --python "${python_version}" --junit 2>&1 | sanity_progress
        ) 9>"${HOME}/.ansible/test/.sanity-python${python_version}.lock" || rc=$?
        ;;
    units)
        (cd "${coll}" && ansible-test units --local --python "${python_version}" --requirements) || rc=$?
        ;;
    integration)
        (TEST_PYTHON_VERSION="${python_version}" "${here}/run_integration.sh" "${coll}" --continue-on-error "$@" 2>&1 \
            | integration_times) || rc=$?
        ;;
    *)
        echo "unknown stage: ${stage} (sanity, units or integration)" >&2
        exit 2
        ;;
esac

for kind in junit data; do
    if [[ -d "${coll}/tests/output/${kind}" ]]; then
        cp -R "${coll}/tests/output/${kind}" "${results}/${kind}"
    fi
done
exit "${rc}"
