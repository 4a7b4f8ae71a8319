# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server strings that Ansible must never run as templates: pure logic, no Ansible imports (the event source
runs in ansible-rulebook, not in Ansible).

``could_be_template(text)`` says whether Jinja could find anything to do in a string; ``could_become_template(text)``
also whether its NFKC form or one of its obvious decodings (URL-decoding, base64, HTML entities, ``\\u`` escapes,
up to DECODE_DEPTH of them in a row) holds a template marker, which a playbook on ansible-core before 2.19 would
template again once it decodes the string. ``inert_event(event)`` turns every such string of an event (every
string, with ``encode_all``) into ``literal_template(text)``: a template whose value is exactly the server's
text, and which ansible-core never templates twice (see docs/docsite/rst/security.rst).

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
import binascii
import html
import re
import unicodedata
from urllib.parse import unquote, unquote_plus

LITERAL_TEMPLATE = "{{ lookup('ansible.builtin.list', '%s') | ansible.builtin.b64decode | string }}"
# What Jinja acts on (with its default delimiters): a statement, an expression, a comment, a line statement
# header override; markers of two characters, so that random bytes of a decoded string rarely hold one.
MARKERS = ("{{", "{%", "{#")
DECODE_DEPTH = 3  # decodings in a row (b64decode | urldecode | b64decode ...) followed
DECODE_MAX = 65536  # characters of a string that are decoded; a longer one is delivered encoded
ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2}))")


def could_be_template(text):
    """Whether Jinja could find anything to do in this server string: a delimiter (every one has a brace),
    or an override header (which may redefine the delimiters)."""
    return "{" in text or "}" in text or text.lstrip().startswith("#jinja2:")


def could_become_template(text):
    """Whether ``text`` could be a template, or becomes one when a playbook normalises it (NFKC: full-width
    braces) or decodes it the obvious ways (``urldecode``, ``b64decode`` standard or URL-safe, HTML entities,
    ``\\u007b`` escapes), up to DECODE_DEPTH decodings in a row."""
    if could_be_template(text):
        return True
    seen, level = set(), [text]
    for dummy in range(DECODE_DEPTH + 1):
        following = []
        for value in level:
            if value in seen:
                continue
            seen.add(value)
            if _has_marker(value) or _has_marker(unicodedata.normalize("NFKC", value)):
                return True
            if len(value) > DECODE_MAX:
                return True  # not decoded: delivered encoded
            following.extend(_decodings(value))
        level = following
    return False


def _has_marker(text):
    return any(marker in text for marker in MARKERS) or text.lstrip().startswith("#jinja2:")


def _decodings(text):
    """The texts that the obvious decodings make of ``text`` (those that change it)."""
    found = []
    if "%" in text or "+" in text:
        found += [unquote(text, errors="replace"), unquote_plus(text, errors="replace")]
    if "&" in text:
        found.append(html.unescape(text))
    if "\\" in text:
        found.append(ESCAPE.sub(lambda match: chr(int(match.group(1) or match.group(2), 16)), text))
    raw = text.encode("utf-8", "surrogatepass")
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:  # as ansible-core's b64decode: characters outside the alphabet dropped, undecodable bytes kept
            found.append(decode(raw).decode("utf-8", "surrogateescape"))
        except (binascii.Error, ValueError):
            pass
    return [value for value in found if value != text]


def literal_template(text):
    """A Jinja template whose value is exactly ``text`` (any Unicode text; a lone surrogate, which is no
    character, becomes ``?``), marked unsafe by ansible-core before 2.19."""
    return LITERAL_TEMPLATE % base64.b64encode(text.encode("utf-8", "replace")).decode("ascii")


def inert_event(value, encode_all=False):
    """The event with every string that could be or become a template (``could_become_template``), or every string
    when ``encode_all``, replaced by ``literal_template`` of it, recursively (keys are the collection's own and
    stay). Other values are returned as they are: a rule condition such as ``event.nac_dot1x.status ==
    "AUTHENTICATED"`` sees the server's words unchanged (unless ``encode_all``)."""
    if isinstance(value, str):
        return literal_template(value) if encode_all or could_become_template(value) else value
    if isinstance(value, dict):
        return dict((key, inert_event(item, encode_all)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [inert_event(item, encode_all) for item in value]
    return value
