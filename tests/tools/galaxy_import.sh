#!/usr/bin/env bash
# Run galaxy-importer (the checks Galaxy runs on an upload) on a built collection tarball, offline.
#
# usage: galaxy_import.sh TARBALL
#
# Fails when the import fails (exit status) and also on any ERROR or WARNING line: a clean import
# prints none, and a WARNING also means a step was skipped (for example ansible-lint or ansible-doc
# not on PATH). Those lines are printed; the "Loading ..." chatter is not. Runs in a temporary
# directory, as the importer writes importer_result.json into its working directory.
set -euo pipefail

if [[ $# -ne 1 || ! -f "$1" ]]; then
    echo "usage: $0 TARBALL" >&2
    exit 2
fi

tarball="$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

rc=0
(cd "${work}" && GALAXY_IMPORTER_CONFIG="${here}/galaxy-importer.cfg" "${python}" -m galaxy_importer.main "${tarball}") \
    >"${work}/log" 2>&1 || rc=$?

problems="$(grep -E '^(ERROR|WARNING|CRITICAL)' "${work}/log" || true)"
if [[ ${rc} -ne 0 || -n "${problems}" ]]; then
    echo "galaxy-importer rejects $(basename "${tarball}") (exit status ${rc}):" >&2
    grep -vE '^Loading ' "${work}/log" >&2 || true
    exit 1
fi
echo "    galaxy-importer: $(tail -n 1 "${work}/log")"
