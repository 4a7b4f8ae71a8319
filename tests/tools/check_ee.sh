#!/usr/bin/env bash
# Check the example execution environment, offline and without a container runtime.
#
# usage: check_ee.sh EE_DEFINITION COLLECTIONS_DIR
#
# 1. `ansible-builder create` validates EE_DEFINITION (version 3) and writes its build context;
# 2. the context's own introspection script, run over COLLECTIONS_DIR (the installed collection,
#    .../ansible_collections/netaccess/nac inside it), must find the collection's Python requirement
#    (requests, from meta/execution-environment.yml): what the image build would install.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: $0 EE_DEFINITION COLLECTIONS_DIR" >&2
    exit 2
fi

python="${PYTHON:-python3}"
context="$(mktemp -d)"
trap 'rm -rf "${context}"' EXIT

ansible-builder create --file "$1" --context "${context}" >/dev/null
deps="$("${python}" "${context}/_build/scripts/introspect.py" introspect "$2")"
if ! grep -qE "^- '?requests[ <>=].*from collection netaccess\.nac" <<<"${deps}"; then
    echo "the execution environment would not get requests from netaccess.nac; introspection says:" >&2
    echo "${deps}" >&2
    exit 1
fi
echo "    execution environment: $1 accepted by ansible-builder; netaccess.nac brings requests"
