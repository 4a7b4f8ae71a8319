# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Event fields that become templates once a playbook derives a value from them (issue 32), on the ansible-core
this runs on: a template in base64 (b64decode), URL-encoded (urldecode) and with full-width braces (NFKC). The
events come from the source's own round (poll_once against an emulator, masked and made inert as the source puts
them on its queue) and reach derived.yml as ansible-rulebook hands them over: yaml.dump into the extra-variables
file, ``-e @file``. The playbook decodes the field, keeps it with set_fact, uses it, loops over it and writes it.

Asserted: no canary file (nothing ran) and the file holds the decoded text exactly. The control (the same events as
they were before issue 32: the fields as the server sent them) is run too and its outcome printed: before 2.19 it
runs every case, which is why the source sends these fields as templates of their value.

usage: derived_check.py PYTHON
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from urllib.parse import quote, unquote_plus

import requests
import yaml

for path in os.environ.get("ANSIBLE_COLLECTIONS_PATH", "").split(os.pathsep):
    if path and path not in sys.path:
        sys.path.append(path)

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import inert_event  # noqa: E402
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import mask  # noqa: E402
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient  # noqa: E402
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_events import (  # noqa: E402
    poll_once,
    secret_forms,
    source_options,
)
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KEY = "nac-demo-admin-key"
# (device, decoding, how the server sends the template)
CASES = [
    ("cam-01", "b64decode", lambda text: base64.b64encode(text.encode()).decode()),
    ("cam-02", "urldecode", lambda text: quote(text, safe="")),
    ("printer-01", "nfkc", lambda text: text.replace("{", "\uff5b").replace("}", "\uff5d")),
]
DECODE = dict(
    b64decode=lambda text: base64.b64decode(text).decode(),
    urldecode=unquote_plus,
    nfkc=lambda text: unicodedata.normalize("NFKC", text),
)


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else sys.executable
    workdir = tempfile.mkdtemp(prefix="nac-derived-")
    canary = os.path.join(workdir, "canary")
    os.mkdir(canary)
    inventory = os.path.join(workdir, "inventory")
    with open(inventory, "w") as handle:
        handle.write("localhost ansible_connection=local ansible_python_interpreter=%s\n" % python)
    failed, lines = 0, []
    try:
        with Emulator().start() as emulator:
            sent = {}
            for device, decoding, encode in CASES:
                template = "{{ lookup('pipe', 'touch %s/%s') }}" % (canary, decoding)
                sent[device] = encode(template)
                requests.post(
                    emulator.url + "/_emulator/dot1x",
                    json=dict(hostname=device, status="UNAUTHENTICATED", message=sent[device]),
                    timeout=10,
                ).raise_for_status()
            client_kwargs, _options = source_options(dict(api_url=emulator.url, api_key=KEY), {})
            client = NacClient(**client_kwargs)
            try:
                events = poll_once(client, hostnames=[device for device, _d, _e in CASES], initial=True).events
                secrets = secret_forms(client_kwargs, client)
            finally:
                client.close()
        by_host = dict((event["nac_dot1x"]["hostname"], event) for event in events if "nac_dot1x" in event)
        for device, decoding, _encode in CASES:
            event = by_host[device]
            for mode, delivered in (("as the source sends it", inert_event(mask(event, secrets))), ("control", event)):
                ran, text = run(workdir, inventory, python, delivered, decoding)
                touched = os.path.exists(os.path.join(canary, decoding))
                if touched:
                    os.unlink(os.path.join(canary, decoding))
                wanted = DECODE[decoding](sent[device])
                if mode == "control":
                    lines.append(
                        "note - control (%s, as before issue 32): %s" % (decoding, "RAN" if touched else "did not run")
                    )
                    continue
                good = ran == 0 and not touched and text == wanted
                failed += not good
                lines.append(
                    "%s - %s, %s: decoded, set_fact, used, loop item, written: %s"
                    % (
                        "ok" if good else "FAIL",
                        decoding,
                        mode,
                        "ran" if touched else "nothing ran, value exact" if text == wanted else "value %r" % text,
                    )
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("\n".join(lines))
    print("eda_derived_values: %d cases, %d fail" % (len(CASES), failed))
    sys.exit(1 if failed else 0)


def run(workdir, inventory, python, event, decoding):
    """derived.yml with the event as ansible-rulebook hands it over: (exit status, the file it wrote)."""
    out = os.path.join(workdir, "derived-%s.txt" % decoding)
    if os.path.exists(out):
        os.unlink(out)
    extra = os.path.join(workdir, "extravars")
    with open(extra, "w") as handle:
        handle.write(
            yaml.dump(
                dict(
                    ansible_eda=dict(ruleset="derived", rule="derived", event=event),
                    derived_field="message",
                    derived_decode=decoding,
                    derived_out=out,
                )
            )
        )
    done = subprocess.run(
        ["ansible-playbook", "-i", inventory, os.path.join(HERE, "derived.yml"), "-e", "@" + extra],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        check=False,
    )
    if done.returncode:
        print(done.stdout.decode("utf-8", "replace")[-3000:])
    text = None
    if os.path.exists(out):
        with open(out, encoding="utf-8") as handle:
            text = handle.read()
    return done.returncode, text


if __name__ == "__main__":
    main()
