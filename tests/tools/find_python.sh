#!/usr/bin/env bash
# Print the path of a Python interpreter of the given version (X.Y), or fail naming it.
#
# usage: find_python.sh X.Y [WHAT_NEEDS_IT]
#
# Looks, in this order, at: the environment variable PYTHON_X_Y (for example PYTHON_3_13=/usr/bin/python3.13);
# pythonX.Y on PATH; pyenv's installs, `$(pyenv root)/versions/X.Y.*/bin/pythonX.Y` (the newest patch
# release), also when pyenv's global version is another one (then pythonX.Y on PATH is a shim that does not
# run). Each candidate must run and report version X.Y. Nothing is installed and nothing is skipped: when
# none is found, the message names the interpreter, what needs it and how to provide it, and the exit
# status is 1.
set -euo pipefail

if [[ $# -lt 1 || ! "$1" =~ ^[0-9]+\.[0-9]+$ ]]; then
    echo "usage: $0 X.Y [WHAT_NEEDS_IT]" >&2
    exit 2
fi
version="$1"
needed_by="${2:-}"
override_name="PYTHON_${version//./_}"

runs_as() {
    # True when "$1" runs and is Python ${version}.
    [[ -n "$1" && -x "$1" ]] && [[ "$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" == "${version}" ]]
}

real_path() {
    # The interpreter itself, not a pyenv shim in front of it.
    "$1" -c 'import sys; print(sys.executable)'
}

candidates=()
if [[ -n "${!override_name:-}" ]]; then
    if runs_as "${!override_name}"; then
        real_path "${!override_name}"
        exit 0
    fi
    echo "${override_name}=${!override_name} is not a Python ${version} interpreter" >&2
    exit 1
fi
if on_path="$(command -v "python${version}" 2>/dev/null)"; then
    candidates+=("${on_path}")
fi
pyenv_root="${PYENV_ROOT:-}"
if command -v pyenv >/dev/null 2>&1; then
    pyenv_root="$(pyenv root 2>/dev/null || true)"
fi
pyenv_root="${pyenv_root:-${HOME:-/nonexistent}/.pyenv}"
if [[ -d "${pyenv_root}/versions" ]]; then
    while IFS= read -r release; do
        candidates+=("${pyenv_root}/versions/${release}/bin/python${version}")
    done < <(find "${pyenv_root}/versions" -mindepth 1 -maxdepth 1 -name "${version}.*" -printf '%f\n' 2>/dev/null \
        | grep -E "^${version//./\\.}\.[0-9]+$" | sort -V -r || true)
fi

for candidate in "${candidates[@]}"; do
    if runs_as "${candidate}"; then
        real_path "${candidate}"
        exit 0
    fi
done

{
    echo "Python ${version} not found${needed_by:+ (needed for ${needed_by})}."
    echo "  Looked at: \$${override_name}, python${version} on PATH, and ${pyenv_root}/versions/${version}.*"
    echo "  Install it (for example: pyenv install ${version}), or point ${override_name} at a python${version}."
} >&2
exit 1
