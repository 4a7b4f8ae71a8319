#!/usr/bin/env bash
# Run a tool of the developer toolchain with the toolchain's virtual environment first on PATH, from any shell
# (no `source .venv/bin/activate` needed): the hooks of .pre-commit-config.yaml call the linters through it.
#
# usage: in_venv.sh TOOL [ARGS...]      (VENV: the toolchain's virtual environment, default .venv of this clone)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
venv="${VENV:-${root}/.venv}"
if [[ $# -lt 1 ]]; then
    echo "usage: $0 TOOL [ARGS...]" >&2
    exit 2
fi
if [[ ! -x "${venv}/bin/$1" ]]; then
    echo "$1 is not in ${venv}/bin: make venv installs the developer toolchain there (or set VENV)" >&2
    exit 1
fi
export PATH="${venv}/bin:${PATH}"
exec "$@"
