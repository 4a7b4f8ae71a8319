# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Authenticate a client's requests: one object per credential scheme, whose one hook the transport calls (no
Ansible imports).

Each scheme builds its ``Authorization`` header and applies it to the header fields every request carries
(``apply``), and names the values a message must never show (``values`` and ``basic``, for
masking.hidden_forms), so that the transport knows no scheme by name. The transport calls ``apply`` once, when
the client is made, because the credentials given do not change while it runs and the fields are encoded once
for all requests (connections.Wire). ``from_options`` picks the scheme of the connection options given (exactly
one: common.options.check_connection refuses two or none).

A new scheme (a session token the user gives, say) is a class here with these three members and a branch of
``from_options``, plus its options in the option table (common/options.py). A scheme that must first log in to
get its token, or renew one that expires, needs more: the transport would have to call the hook again, which it
does not do today.
"""

import base64

AUTHORIZATION = "Authorization"


class BearerKey:
    """Send an API key as a Bearer token (RFC 6750), as the NAC API takes it."""

    def __init__(self, api_key: str):
        self._key = api_key
        self.values = (api_key,)  # what masking.hidden_forms hides, in every form
        self.basic = ()

    def apply(self, headers: list) -> None:
        """Add the ``Authorization`` field to ``headers`` ((name, value) pairs): the request carries the key."""
        headers.append((AUTHORIZATION, "Bearer %s" % self._key))


class BasicLogin:
    """Send a username and password as HTTP Basic (RFC 7617), in UTF-8, not in the latin-1 of requests' own
    HTTPBasicAuth, so that any printable character of a password reaches the service as typed."""

    def __init__(self, username: str, password: str):
        self._token = base64.b64encode(("%s:%s" % (username, password)).encode("utf-8")).decode("ascii")
        self.values = (password,)  # the token's forms come from ``basic`` (masking.hidden_forms)
        self.basic = ((username, password),)

    def apply(self, headers: list) -> None:
        """Add the ``Authorization`` field to ``headers`` ((name, value) pairs): the request carries the login."""
        headers.append((AUTHORIZATION, "Basic %s" % self._token))


def from_options(option: dict):
    """Pick the scheme of the connection options ``option``: the API key when given, else the username and
    password, so that the transport calls one hook whatever the credentials."""
    if option.get("api_key"):
        return BearerKey(option["api_key"])
    return BasicLogin(option.get("username"), option.get("password"))
