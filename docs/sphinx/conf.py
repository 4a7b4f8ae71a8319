# Sphinx configuration of the netaccess.nac documentation site (`make docs`).
# Started from `antsibull-docs sphinx-init --use-current --squash-hierarchy netaccess.nac`;
# the Makefile generates the RST with antsibull-docs and runs sphinx-build -W with this file.
"""Sphinx configuration of the netaccess.nac documentation site."""

import re
import zlib
from pathlib import Path

from sphinx.errors import ExtensionError

project = "netaccess.nac"
copyright = "netaccess.nac contributors"  # pylint: disable=redefined-builtin

title = "netaccess.nac collection"
html_short_title = "netaccess.nac collection"

# myst_parser: the emulator page includes tests/emulator/README.md, Markdown, as its reference part.
extensions = ["sphinx.ext.intersphinx", "sphinx_antsibull_ext", "myst_parser"]
# Markdown is only included (with an explicit parser), never a page of its own.
source_suffix = {".rst": "restructuredtext"}
# The README's "## Faults" and so on become anchors of the emulator page.
myst_heading_anchors = 3
# The README starts at "##" once its title is left out: its sections are the page's.
suppress_warnings = ["myst.header"]

pygments_style = "ansible"
highlight_language = "YAML+Jinja"

html_theme = "sphinx_ansible_theme"
html_show_sphinx = False
html_theme_options = {
    "display_version": False,
    "show_extranav": False,
    "show_rtd_ethical_ads": False,
    # The theme's defaults point at ansible.com; this is the collection's own site.
    "topbar_links": {
        "Repository": "https://github.com/netaccess/nac",
        "Issues": "https://github.com/netaccess/nac/issues",
        "Ansible documentation": "https://docs.ansible.com/",
    },
    "documentation_home_url": "https://netaccess.github.io/nac/",
}

html_use_smartypants = True
html_use_modindex = False
html_use_index = False
html_copy_source = False

default_role = "any"
nitpicky = True

# The generated pages link to a few labels of the Ansible documentation (such as
# `common_return_values`). Its intersphinx inventory cannot be downloaded offline, so the build
# writes a stub inventory with those labels (their real addresses) and never fetches anything:
# every warning left is about this collection's own pages, and -W makes it fatal. A page that
# links to another label of docs.ansible.com needs it added here.
ANSIBLE_DOCS = "https://docs.ansible.com/projects/ansible/devel/"
ANSIBLE_LABELS = {
    # label: (page and anchor under ANSIBLE_DOCS, title)
    "common_return_values": ("reference_appendices/common_return_values.html#common-return-values", "Return Values"),
    "ansible_configuration_settings": (
        "reference_appendices/config.html#ansible-configuration-settings",
        "Ansible Configuration Settings",
    ),
    "module_defaults": ("playbook_guide/playbooks_module_defaults.html#module-defaults", "Module defaults"),
    "collections_installing": (
        "collections_guide/collections_installing.html#collections-installing",
        "Installing collections",
    ),
    "list_of_collections": ("collections/index.html#list-of-collections", "Collection Index"),
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
}
# Environment variables of ansible-core's own options that plugin pages link to (the inventory
# plugin's cache options and ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED): anchors on the config page.
ANSIBLE_ENVVARS = (
    "ANSIBLE_CACHE_PLUGIN",
    "ANSIBLE_CACHE_PLUGIN_CONNECTION",
    "ANSIBLE_CACHE_PLUGIN_PREFIX",
    "ANSIBLE_CACHE_PLUGIN_TIMEOUT",
    "ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED",
)
STUB_INVENTORY = "../ansible_devel.inv"  # relative to the source directory (the generated RST)
intersphinx_mapping = {"ansible_devel": (ANSIBLE_DOCS, STUB_INVENTORY)}


def _write_stub_inventory(app):
    lines = "".join(f"{label} std:label -1 {uri} {name}\n" for label, (uri, name) in sorted(ANSIBLE_LABELS.items()))
    lines += "".join(
        f"{name} std:envvar -1 reference_appendices/config.html#envvar-{name} -\n" for name in ANSIBLE_ENVVARS
    )
    header = (
        "# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    (Path(app.srcdir) / STUB_INVENTORY).write_bytes(header.encode() + zlib.compress(lines.encode()))


# What antsibull-docs generates, adjusted for this site (each pattern must match, or the build fails, so
# that a change of antsibull-docs' output is noticed):
# - the index title is the collection's name, not its title-cased form ("Netaccess.Nac");
# - the environment variables page (an orphan as generated) is in the navigation, under Reference;
# - the plugin index lists the event source (antsibull-docs knows no event sources): its page is a guide,
#   docs/docsite/rst/event_source.rst, listed here rather than among the guides;
# - the environment variables page also lists those read outside the plugins' options (the event source's
#   NAC_WATCH_INTERVAL, the playbook dot1x_requery's NAC_REPORT_DIR);
# - each plugin page's "To install it use: ansible-galaxy collection install git+..." also says that the
#   collection is not on Galaxy and names the other ways: the tarball of make build, a git checkout.
INSTALL_ELSEWHERE = (
    "netaccess.nac is not published on Galaxy. Or install the tarball that :code:`make build` writes, or a"
    " git checkout of the repository: see"
    " :ref:`Install it for good <ansible_collections.netaccess.nac.docsite.quickstart_install>`."
)
EVENT_SOURCE_INDEX = """
.. _event_source_plugins_in_netaccess.nac:

Event Source Plugins
~~~~~~~~~~~~~~~~~~~~

* :ref:`dot1x_status event source <ansible_collections.netaccess.nac.docsite.event_source>` -- The 802.1x status of \
the devices, as an event for every change (Event-Driven Ansible)

.. toctree::
    :maxdepth: 1
    :hidden:

    docsite/event_source

"""
REPORT_DIR = """.. envvar:: NAC_REPORT_DIR

    The directory of the JSON reports of the playbook ``netaccess.nac.dot1x_requery`` (the action of the example
    rulebook ``netaccess.nac.dot1x_watch``), unless its variable ``nac_requery_report_dir`` is given;
    default ``/tmp/nac-dot1x-reports``.

    *Used by:*
    :ref:`the playbook netaccess.nac.dot1x_requery <ansible_collections.netaccess.nac.docsite.eda>`
"""
WATCH_INTERVAL = """
.. envvar:: NAC_WATCH_INTERVAL

    Seconds from the start of one round of polling to the start of the next, unless the rulebook gives the
    argument ``interval``; default 60.

    *Used by:*
    :ref:`the event source netaccess.nac.dot1x_status <ansible_collections.netaccess.nac.docsite.event_source>`
"""
# The emulator page's reference part is tests/emulator/README.md itself, Markdown, included here rather
# than in the guide's source: the guide is also checked (rstcheck) and shipped without Sphinx and myst.
EMULATOR_README = (
    "\n.. include:: ../../../tests/emulator/README.md\n   :parser: myst_parser.sphinx_\n   :start-line: 1\n"
)
REWRITES = {
    "docsite/emulator": [
        (r"^\.\. The reference: tests/emulator/README\.md, inserted here by docs/sphinx/conf\.py.*\n", EMULATOR_README),
    ],
    "index": [
        (r"^Netaccess\.Nac\n=+\n", "netaccess.nac collection\n========================\n"),
        (r"(\n    docsite/compatibility\n)", r"\1    environment_variables\n"),
        (r"\n(?=\.\. _role_plugins_in_netaccess\.nac:\n)", lambda match: EVENT_SOURCE_INDEX),
    ],
    "environment_variables": [
        (r"^(?=\.\. envvar:: NAC_TENANT\n)", lambda match: REPORT_DIR),
        (r"\n*\Z", lambda match: "\n" + WATCH_INTERVAL),
    ],
    "*": [
        (
            r"^( +)(To install it,? use: :code:`ansible\\-galaxy collection install git\+https://github\.com/netaccess/nac\.git,main`\.)\n",
            lambda match: "%s%s\n%s%s\n" % (match[1], match[2], match[1], INSTALL_ELSEWHERE),
        ),
    ],
}


def _rewrite_generated(app, docname, source):
    if docname not in REWRITES and docname.startswith("docsite/"):
        return
    for pattern, replacement in REWRITES.get(docname, REWRITES["*"]):
        source[0], count = re.subn(pattern, replacement, source[0], count=1, flags=re.MULTILINE)
        if count != 1:
            raise ExtensionError("docs/sphinx/conf.py: %r not found in the generated %s.rst" % (pattern, docname))


def setup(app):
    # Runs before intersphinx loads its inventories (event builder-inited).
    _write_stub_inventory(app)
    app.connect("source-read", _rewrite_generated)
