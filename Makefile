# Build and test machinery for the netaccess.nac collection.
#
#   make test     venv, build, lint, sanity, units, integration (what CI runs)
#   make demo     run playbooks/demo.yml against a local NAC API emulator
#   make help     list the targets
#
# Works on a fresh clone with only Python 3.11 and the package registries,
# also with an empty HOME. ansible-test needs the collection at a real path
# .../ansible_collections/netaccess/nac and lists files through git, so the
# built tarball is installed into $(STAGE), outside the repository, and the
# sanity, unit and integration tests run in that installed copy.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.SILENT:
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help
# Stages share the staged copy and its tests/output: never run them in parallel.
.NOTPARALLEL:

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
ANSIBLE_TEST_PYTHON ?= 3.11
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
PY := $(BIN)/python
VENV_STAMP := $(VENV)/.requirements-dev.stamp

TMPROOT := $(patsubst %/,%,$(or $(TMPDIR),/tmp))
STAGE ?= $(TMPROOT)/netaccess-nac-$(shell printf '%s' '$(CURDIR)' | sha1sum | cut -c1-8)
COLL := $(STAGE)/ansible_collections/netaccess/nac
BUILD_DIR := $(CURDIR)/build

export PATH := $(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_ROOT_USER_ACTION := ignore
export PYTHONDONTWRITEBYTECODE := 1
export ANSIBLE_COLLECTIONS_PATH := $(STAGE)
export ANSIBLE_LOCALHOST_WARNING := false
export ANSIBLE_INVENTORY_UNPARSED_WARNING := false
export ANSIBLE_RETRY_FILES_ENABLED := false

# Drops ansible-test's per-test progress lines, its locale warning and the
# pip chatter of its first (cold) sanity run; errors and results stay. sed,
# unlike grep -v, succeeds when it filters everything out (pipefail).
FILTER := sed -u -E \
	-e '/^Running sanity test /d' \
	-e '/^WARNING: (Using locale |Reviewing previous [0-9]+ warning)/d' \
	-e '/^Installing requirements for Python /d' \
	-e '/^Using cached pip .* bootstrap script/d' \
	-e '/^(Collecting|Processing|Looking in links:|Installing collected packages:|Successfully installed|Requirement already satisfied) /d' \
	-e '/^ +(Downloading|Using cached|Attempting uninstall:|Found existing installation:|Uninstalling|Successfully uninstalled) /d' \
	-e '/ eta [0-9:]+$$/d'

# Prints "==> name" when a stage starts and "    name: ok (N s)" when it ends.
define stage_start
echo "==> $(1)"; _t0=$$SECONDS
endef
define stage_end
echo "    $(1): ok ($$(( SECONDS - _t0 )) s)"
endef

.PHONY: help venv build lint sanity units integration test demo bench soak clean distclean get-pip-standin

help:
	echo "targets:"
	echo "  venv         create .venv and install requirements-dev.txt"
	echo "  build        build the collection tarball into build/ and install it into $(STAGE)"
	echo "  lint         ansible-lint (production profile), antsibull-docs, antsibull-changelog"
	echo "  sanity       ansible-test sanity in the installed copy"
	echo "  units        ansible-test units in the installed copy"
	echo "  integration  ansible-test integration against the NAC API emulator"
	echo "  test         all of the above, stopping at the first failure (what CI runs)"
	echo "  demo         run playbooks/demo.yml against the NAC API emulator"
	echo "  bench        print the benchmarks' figures (bulk creation, 802.1x status of 1,000 devices)"
	echo "  soak         500 devices and their 802.1x status through 20 % injected faults: PASS/FAIL per target"
	echo "  clean        remove build output, test output and the staged copy"
	echo "  distclean    clean, and remove .venv too"

venv: $(VENV_STAMP)

$(VENV_STAMP): requirements-dev.txt
	$(call stage_start,venv)
	if [[ ! -x "$(PY)" ]]; then
		"$(PYTHON)" -m venv "$(VENV)"
	fi
	"$(PY)" -m pip install --quiet -r requirements-dev.txt
	touch "$@"
	$(call stage_end,venv)

build: venv
	$(call stage_start,build)
	rm -rf "$(BUILD_DIR)" "$(COLL)"
	mkdir -p "$(BUILD_DIR)" "$(STAGE)"
	ansible-galaxy collection build --force --output-path "$(BUILD_DIR)" . >/dev/null
	tarball=$$(ls "$(BUILD_DIR)"/netaccess-nac-*.tar.gz)
	ansible-galaxy collection install --offline --force -p "$(STAGE)" "$$tarball" >/dev/null
	echo "    $$(basename "$$tarball") installed in $(COLL)"
	$(call stage_end,build)

lint: build
	$(call stage_start,lint)
	ansible-lint -q --nocolor
	shellcheck -x .ci/run tests/tools/*.sh
	antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent "$(COLL)"
	antsibull-changelog lint
	$(call stage_end,lint)

# ansible-test bootstraps pip into the virtual environments of its sanity
# tests with a get-pip script downloaded from a host CI cannot reach; put an
# offline stand-in at the cache path it checks first (file name from the pip
# version that this ansible-test pins).
get-pip-standin: venv
	pip_version=$$("$(PY)" -c 'from ansible_test._internal.python_requirements import get_venv_packages as g; from types import SimpleNamespace as n; print(g(n(version="$(ANSIBLE_TEST_PYTHON)"))["pip"])')
	cache="$$HOME/.ansible/test/cache/get_pip_$${pip_version//./_}.py"
	if [[ ! -s "$$cache" ]]; then
		mkdir -p "$$(dirname "$$cache")"
		cp tests/tools/get_pip_standin.py "$$cache"
	fi

sanity: build get-pip-standin
	$(call stage_start,sanity)
	cd "$(COLL)"
	ansible-test sanity --local --python $(ANSIBLE_TEST_PYTHON) 2>&1 | $(FILTER)
	$(call stage_end,sanity)

units: build
	$(call stage_start,units)
	cd "$(COLL)"
	ansible-test units --local --python $(ANSIBLE_TEST_PYTHON) --requirements 2>&1 | $(FILTER)
	$(call stage_end,units)

integration: build
	$(call stage_start,integration)
	PYTHON="$(PY)" TEST_PYTHON_VERSION=$(ANSIBLE_TEST_PYTHON) tests/tools/run_integration.sh "$(COLL)" 2>&1 | $(FILTER)
	$(call stage_end,integration)

test: venv build lint sanity units integration
	echo "==> all stages passed"
	"$(PY)" tests/tools/test_summary.py "$(COLL)"

demo: venv build
	$(call stage_start,demo)
	PYTHON="$(PY)" ANSIBLE_PYTHON_INTERPRETER="$(PY)" tests/tools/run_demo.sh
	$(call stage_end,demo)

# Speed and memory are measured here, never by timed tests: the scripts print figures.
bench: venv build
	$(call stage_start,bench)
	"$(PY)" benchmarks/bench_nac_device_bulk.py --devices 1000 --latency 0.02 --concurrency 8
	"$(PY)" benchmarks/bench_dot1x_status.py --devices 1000 --latency 0.02 --concurrency 1 32 --ansible
	$(call stage_end,bench)

# Not part of test: about a minute or two. Exits non-zero when a reliability target is missed.
soak: venv
	$(call stage_start,soak)
	"$(PY)" benchmarks/soak_faults.py --devices 500
	$(call stage_end,soak)

clean:
	rm -rf "$(BUILD_DIR)" "$(STAGE)" tests/output tests/integration/inventory \
		tests/integration/integration_config.yml changelogs/.plugin-cache.yaml .pytest_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf "$(VENV)" .ansible
