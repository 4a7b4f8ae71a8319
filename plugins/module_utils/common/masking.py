# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials: the forms in which a secret could be shown, and the one way to mask them (no Ansible imports).

``hidden_forms(values, api_url, basic, proxies, forms)`` lists every form of the secrets (``api_key``,
``password``, a password inside ``api_url``, the HTTP Basic token of a username and password, a proxy's password
and its Basic token), each as it is, in base64 and base64url (padded or not), escaped and URL-encoded;
``mask(value, forms)`` replaces each of them, and any part of one that a cut (``...``) left at the end of a text,
in a text or in every string (and key) of a result. Whatever cuts or collapses a text for a message masks it first
(server_text.excerpt): no cut shows the start of a secret, no collapsed whitespace hides one. The client masks its
errors with it, the modules their failures and results, the inventory plugin its errors and the event source its
events and log lines: a secret is hidden the same way, in every form, wherever it could appear. The tenant is an
identifier, not a secret: it is never masked.

No masking finds a secret the server changed before echoing it: its case changed, split in parts or interleaved,
reversed, in hex or another encoding not listed here, base64 of a longer text that holds it (at another offset),
hashed, compressed or encrypted. The security page of the docs says so too.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import re
import unicodedata
from urllib.parse import quote, quote_plus, unquote

MASK = "********"
CUT = "..."  # what ends a text cut short (server_text.shown): the part of a secret before it is masked too
# Whatever it holds (a password may contain '/', '?', '#' or '@'), the userinfo runs to the last '@'.
USERINFO = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?(.*)@", re.DOTALL)
PERCENT = re.compile("%[0-9A-F]{2}")  # a percent-encoded octet, as quote writes it (upper-case hex)
SHORTEST_ENCODED = 6  # a base64 form shorter than this is not masked (it would mask common words, not a secret)


def mask(text, secrets):
    """Mask in ``text`` each of ``secrets`` (the forms from ``hidden_forms``, longest first) as ********, and also the
    start of any of them that ends where the text was cut short (before a CUT): a text cut before it was masked never
    shows the first characters of a secret. A dict, list or tuple (a module's result, an event) is masked in every
    string it holds, its keys too; other values are returned as they are."""
    if not secrets or not text:
        return text
    if isinstance(text, (dict, list, tuple)):  # nothing to mask: the structure as it is (not copied)
        if not _holds(text, secrets):
            return text
        found = re.compile("|".join(re.escape(secret) for secret in secrets) + "|" + re.escape(CUT))
        return _masked(text, secrets, found.search)
    if not isinstance(text, str):
        return text
    for secret in secrets:
        text = text.replace(secret, MASK)
    if CUT in text:
        text = CUT.join(_mask_tail(part, secrets) for part in text.split(CUT)[:-1]) + CUT + text.rsplit(CUT, 1)[1]
    return text


def _masked(value, secrets, found):
    """Mask a structure: each of its strings (keys too) in which ``found`` finds a secret or a cut masked."""
    if isinstance(value, dict):
        return dict((_masked(key, secrets, found), _masked(item, secrets, found)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return type(value)(_masked(item, secrets, found) for item in value)
    return mask(value, secrets) if isinstance(value, str) and found(value) else value


def _holds(value, secrets):
    """Tell whether the strings of ``value`` (a structure) may hold one of ``secrets`` or a cut (CUT): looked for in its
    JSON text, in which each character of a string is escaped alone, so a form in a string is a form in the text."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):  # keys that JSON cannot hold, a cycle: every string is looked at
        return True
    return CUT in text or any(json.dumps(secret, ensure_ascii=False)[1:-1] in text for secret in secrets)


def _mask_tail(text, secrets):
    """Mask the longest end of ``text`` that is the start of one of ``secrets``."""
    longest = 0
    for secret in secrets:
        for size in range(min(len(secret) - 1, len(text)), longest, -1):
            if text.endswith(secret[:size]):
                longest = size
                break
    return text[: len(text) - longest] + MASK if longest else text


def hidden_forms(values, api_url=None, basic=(), proxies=(), forms=()) -> list:
    """Give every form in which the secrets ``values`` (and a password in ``api_url``) could be shown: as they are,
    escaped (repr, ascii, JSON, JSON with ``\\/``, bytes) and URL-encoded (quote, quote_plus, in upper and lower case
    hex), each also with its runs of whitespace collapsed to one space (as a one-line excerpt shows a text), longest
    first.

    Each secret is also known in its base64 forms (``base64_forms``: base64 and base64url, with and without padding),
    which are then escaped and URL-encoded as the secret itself is.

    ``basic``: (username, password) pairs whose HTTP Basic token (base64 of ``username:password`` in UTF-8, as
    http/auth.py's BasicLogin sends it, with and without padding, and in base64url) is a secret too, and so is the
    base64 of that token. ``proxies``: proxy URLs (requests' ``proxies`` of the environment, HTTPS_PROXY / HTTP_PROXY):
    the password of each, and the Basic token of its ``user:password`` (URL-decoded, in latin-1 as requests sends
    ``Proxy-Authorization``, and in UTF-8). ``forms``: forms found already (a client's ``secrets``), kept as they
    are."""
    values = [value for value in values if isinstance(value, str) and value]
    password = url_password(api_url)
    if password:
        values += [password, unquote(password)]
    values += [form for value in values for form in base64_forms(value.encode("utf-8"))]
    for username, secret in basic or ():
        if isinstance(username, str) and isinstance(secret, str) and secret:
            raw = ("%s:%s" % (username, secret)).encode("utf-8")  # what http/auth.py's BasicLogin encodes
            values += base64_forms(raw)  # the token, every way
            values += base64_forms(base64.b64encode(raw))
    for proxy in proxies or ():
        values += _proxy_secrets(proxy)
    found = set(form for form in forms or () if isinstance(form, str))
    for value in values:
        found.update(
            (
                value,
                repr(value)[1:-1],
                ascii(value)[1:-1],
                json.dumps(value)[1:-1],
                json.dumps(value)[1:-1].replace("/", "\\/"),  # as PHP and others escape a slash in JSON
                repr(value.encode("utf-8"))[2:-1],
            )
        )
        for encoded in (quote(value), quote(value, safe=""), quote_plus(value), quote_plus(value, safe="")):
            found.update((encoded, PERCENT.sub(lambda hexa: hexa.group(0).lower(), encoded)))
    found.update([" ".join(form.split()) for form in found])
    return sorted((form for form in found if form), key=len, reverse=True)


def _proxy_secrets(proxy):
    """Give the password of the proxy URL ``proxy`` and the Basic tokens of its credentials, or []."""
    found = USERINFO.match(proxy) if isinstance(proxy, str) else None
    if not found or ":" not in found.group(1):
        return []
    user, _colon, password = found.group(1).partition(":")
    user, plain = unquote(user), unquote(password)
    secrets = [password, plain]
    for encoding in ("latin-1", "utf-8"):
        try:
            token = ("%s:%s" % (user, plain)).encode(encoding)
        except UnicodeEncodeError:
            continue
        secrets += base64_forms(token)
    secrets += [form for value in (password, plain) for form in base64_forms(value.encode("utf-8"))]
    return [secret for secret in secrets if secret]


def base64_forms(raw: bytes) -> list:
    """Give the base64 forms of ``raw`` (bytes) a server could echo: base64 and base64url (RFC 4648), each with and
    without its ``=`` padding, none shorter than SHORTEST_ENCODED. Only the encoding of ``raw`` alone is known: the same
    bytes encoded inside a longer text start at another offset and look different."""
    forms = []
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        text = encode(raw).decode("ascii")
        forms += [text, text.rstrip("=")]
    return [form for form in forms if len(form) >= SHORTEST_ENCODED]


def strip_userinfo(url: str) -> str:
    """Strip the ``user:password@`` part off a URL (everything up to its last ``@``)."""
    found = USERINFO.match(url)
    return url[: found.start(1)] + url[found.end(0) :] if found else url


def url_password(url):
    """Give the password in a URL's userinfo (``user:password@``; the whole userinfo when it has no ``:``), or None."""
    found = USERINFO.match(url) if isinstance(url, str) else None
    if not found:
        return None
    user, colon, password = found.group(1).partition(":")
    return (password if colon else user) or None


def credential_problem(name, value):
    """Say why the credential option ``name`` cannot be sent in a header, or None. Never shows the value.

    Basic credentials are sent as UTF-8, so username and password may hold any printable character (the username no
    ``:``); an API key (a Bearer token, RFC 6750) and the X-Tenant header, printable ASCII only; none of them line
    breaks or other control characters."""
    if value is None:
        return None
    if not isinstance(value, str):
        return "must be a string"
    for index, char in enumerate(value):
        problem = _character_problem(name, char, index, len(value))
        if problem:
            return problem
    return None


def _character_problem(name, char, index, length):
    where = "at its end" if index == length - 1 else "at its start" if index == 0 else "at position %d" % (index + 1)
    if char in "\r\n\x85\u2028\u2029":
        return "contains a line break (%s), which cannot be sent in an HTTP header" % where
    if unicodedata.category(char) == "Cc":
        return "contains a control character (%s), which cannot be sent in an HTTP header" % where
    if name in ("api_key", "tenant") and not (" " <= char <= "~"):
        return (
            "contains a character that is not ASCII (%s): it is sent as an HTTP header, which carries ASCII only"
            % where
        )
    if char == " " and (name == "api_key" or (name == "tenant" and index in (0, length - 1))):
        return "contains a space (%s), which the HTTP header would not carry as given" % where
    if name == "username" and char == ":":
        return "contains ':' (%s), which HTTP Basic authentication cannot carry in a username" % where
    return None
