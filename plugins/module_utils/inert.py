# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server strings that Ansible must never run as templates: pure logic, no Ansible imports (the event source
runs in ansible-rulebook, not in Ansible).

``could_be_template(text)`` says whether Jinja could find anything to do in a string. ``inert_event(event)``
turns every such string of an event into ``literal_template(text)``: a template whose value is exactly the
server's text, and which ansible-core never templates twice (see docs/docsite/rst/security.rst).

Why the event needs this: ansible-rulebook writes the event of a ``run_playbook`` action as YAML
(``yaml.dump`` into the ``env/extravars`` of ansible-runner), and ansible-runner gives that file to
ansible-playbook as ``-e @file``. ansible-core loads an extra-vars file as trusted (2.19+: TrustedAsTemplate)
or plain (before 2.19) and templates every string of it when it is used; a mark such as
``{"__ansible_unsafe": ...}`` is honoured by its JSON decoder only, and ``yaml.dump`` never writes the
``!unsafe`` tag. So the event itself carries the value as a template of a constant:

* its only input is a base64 text (no brace, quote or backslash: nothing of the server's text is parsed);
* it goes through a lookup (``ansible.builtin.list`` returns its term), so that before 2.19 Ansible marks the
  result unsafe (lookup results are), and that unsafety follows the value through filters, facts and loops;
  from 2.19 on a template's result is never trusted, so it is never templated again;
* it ends in ``| string``, so that Ansible before 2.19 does not turn a value such as ``{1: 2}`` into a dict.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

LITERAL_TEMPLATE = "{{ lookup('ansible.builtin.list', '%s') | ansible.builtin.b64decode | string }}"


def could_be_template(text):
    """Whether Jinja could find anything to do in this server string: a delimiter (every one has a brace),
    or an override header (which may redefine the delimiters)."""
    return "{" in text or "}" in text or text.lstrip().startswith("#jinja2:")


def literal_template(text):
    """A Jinja template whose value is exactly ``text`` (any Unicode text; a lone surrogate, which is no
    character, becomes ``?``), marked unsafe by ansible-core before 2.19."""
    return LITERAL_TEMPLATE % base64.b64encode(text.encode("utf-8", "replace")).decode("ascii")


def inert_event(value):
    """The event with every string that could be a template replaced by ``literal_template`` of it, recursively
    (keys are the collection's own and stay). Other values are returned as they are: a rule condition such as
    ``event.nac_dot1x.status == "AUTHENTICATED"`` sees the server's words unchanged."""
    if isinstance(value, str):
        return literal_template(value) if could_be_template(value) else value
    if isinstance(value, dict):
        return dict((key, inert_event(item)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [inert_event(item) for item in value]
    return value
