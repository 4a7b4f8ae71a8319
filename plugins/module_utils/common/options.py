# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options shared by every entry point, declared once, and their bounds (no Ansible imports).

``CONNECTION_OPTIONS`` is the table of the connection options, one ``Option`` record each: the
modules' argument spec (module.py), the inventory plugin, the event source (dot1x_events.py) and the
client's own defaults (transport.Transport, ``check_connection``) are built from it, and a unit test
checks that the doc fragment ``netaccess.nac.connection``, the inventory plugin's and the event
source's documentation match it. ``check_connection`` and ``check_concurrency`` are
the one check of each bound, raising NacConfigError with one wording wherever the option is given.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import re

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import (
    USERINFO,
    credential_problem,
    strip_userinfo,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.tls_trust import check_ca_path

Option = collections.namedtuple("Option", "name type env default secret doc")
Option.__doc__ = """One connection option: its ``name`` (a NacClient argument), its Ansible ``type``, the environment
variable ``env`` it falls back to (None: none), its ``default``, whether it is a ``secret`` (masked in every
output), and ``doc``, the first line of its description in the doc fragment netaccess.nac.connection."""

CONNECTION_OPTIONS = collections.OrderedDict(
    (option.name, option)
    for option in (
        Option(
            "api_url",
            "str",
            "NAC_API_URL",
            None,
            False,
            "Base address of the NAC service, for example V(https://nac.example.com).",
        ),
        Option(
            "api_key",
            "str",
            "NAC_API_KEY",
            None,
            True,
            "API key of an account with the privilege C(public_api), sent as C(Authorization: Bearer <key>).",
        ),
        Option(
            "username",
            "str",
            "NAC_USERNAME",
            None,
            False,
            "Name of the account for HTTP Basic authentication, the real product's documented scheme.",
        ),
        Option(
            "password",
            "str",
            "NAC_PASSWORD",
            None,
            True,
            "Password of O(username).",
        ),
        # An identifier, not a secret: masking it would also mask every equal value in the results.
        Option(
            "tenant",
            "str",
            "NAC_TENANT",
            None,
            False,
            "Tenant token identifying the site, sent as the C(X-Tenant) header on every request when given.",
        ),
        Option(
            "validate_certs",
            "bool",
            "NAC_VALIDATE_CERTS",
            True,
            False,
            "Whether to verify the TLS certificate of the service.",
        ),
        Option(
            "ca_path",
            "path",
            "NAC_CA_PATH",
            None,
            False,
            (
                "PEM bundle of certificate authorities to trust for the service's certificate (or a directory of them"
                " prepared with C(c_rehash))."
            ),
        ),
        Option(
            "timeout",
            "float",
            "NAC_TIMEOUT",
            30.0,
            False,
            (
                "Seconds that each attempt of a request may take as a whole, greater than 0 and at most 86400 - "
                "connecting, sending and receiving the complete reply (a reply that trickles in slowly does not "
                "extend it)."
            ),
        ),
        Option(
            "max_retries",
            "int",
            None,
            3,
            False,
            (
                "How often a request that failed in a retryable way is tried again, with backoff. At most 10; a "
                "larger value counts as 10."
            ),
        ),
        Option(
            "unreachable_timeout",
            "float",
            "NAC_UNREACHABLE_TIMEOUT",
            60.0,
            False,
            (
                "Seconds to wait for a service that stops answering in the middle of a task (connections refused or "
                "timing out, no reply to anything, as during a restart), from 0 (never wait) to 3600."
            ),
        ),
        Option(
            "max_reply_mb",
            "int",
            "NAC_MAX_REPLY_MB",
            256,
            False,
            "The largest reply the collection reads, in MiB (1 MiB is 1,048,576 bytes), from 1 to 65536.",
        ),
        Option(
            "max_list_items",
            "int",
            "NAC_MAX_LIST_ITEMS",
            2000000,
            False,
            (
                "The most items one list (the device list, the intents) may have, all its pages together, from 1 to "
                "1,000,000,000. A list that has more fails the task, naming this option, before anything is done with"
                " it."
            ),
        ),
        Option(
            "max_list_mb",
            "int",
            "NAC_MAX_LIST_MB",
            1024,
            False,
            (
                "The most MiB of replies one list may take, all its pages together, from 1 to 1048576. Each page is "
                "read with what is left of it as its limit (or O(max_reply_mb), when that is less), so reading stops "
                "as soon as the list passes it; the message names this option."
            ),
        ),
    )
)
SECRET_OPTIONS = tuple(option.name for option in CONNECTION_OPTIONS.values() if option.secret)
# name -> default: the connection options of a client when none is given (the defaults of transport.Transport too).
CONNECTION_DEFAULTS = collections.OrderedDict((option.name, option.default) for option in CONNECTION_OPTIONS.values())

# The bounds of every number an option may be (a larger one is refused, naming the option and its range):
# each is far beyond any use, and small enough for what it feeds (a socket timeout, a sleep, a deadline).
TIMEOUT_MAX = 86400.0  # timeout: a day for one request
REPLY_MB_MAX = 65536  # max_reply_mb (64 GiB)
LIST_MB_MAX = 1048576  # max_list_mb (1 TiB)
LIST_ITEMS_MAX = 1000000000  # max_list_items
WAIT_TIMEOUT_MAX = 604800  # nac_dot1x_status's wait_timeout: a week
WAIT_INTERVAL_MAX = 86400.0  # nac_dot1x_status's wait_interval, the event source's interval: a day
# The words of ansible-core's boolean() (ansible.module_utils.parsing.convert_bool), in any case, and real booleans:
# every boolean option of every entry point takes these and nothing else (``boolean``).
BOOLEAN_TRUE = frozenset(("y", "yes", "on", "1", "true", "t"))
BOOLEAN_FALSE = frozenset(("n", "no", "off", "0", "false", "f"))
INSECURE_TLS = (
    "validate_certs is false: the TLS certificate of the NAC service is not verified, so whoever answers in its "
    "place (anyone on the network path) receives the credentials and can send any reply. Trust the service's "
    "certificate with ca_path (NAC_CA_PATH) instead."
)
MAX_CONCURRENCY = 256  # requests in flight at once, at most: the modules' concurrency, the connection pool
MAX_RETRIES_CAP = 10  # max_retries above this is capped: with the backoff of transport.py, at most about a minute
# How long (seconds) an uncertain write is looked for in the list before it may be sent again (apply.py),
# when nac_device's settle_timeout is not given; and its bound.
SETTLE_TIMEOUT = 60.0
SETTLE_TIMEOUT_MAX = 3600
UNREACHABLE_TIMEOUT_MAX = 3600  # unreachable_timeout
URL_FORM = re.compile(r"^https?://[^/?#\s\x00-\x1f\x7f]+(/[^?#\s\x00-\x1f\x7f]*)?\Z", re.IGNORECASE)


def connection_values(get):
    """{option: value} of every connection option, each read with ``get(name)``: NacClient's arguments."""
    return dict((name, get(name)) for name in CONNECTION_OPTIONS)


def boolean(value, name):
    """``value`` as a bool when it is one of Ansible's boolean words (BOOLEAN_TRUE, BOOLEAN_FALSE, any case, around
    spaces), a real bool, or 1 / 0; else NacConfigError naming the option ``name`` and the value. Never guessed:
    an unknown word (``ture``, ``2``, ``enabled``, an empty string) would turn TLS verification off by mistake."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    text = value.strip().lower() if isinstance(value, str) else None
    if text in BOOLEAN_TRUE or text in BOOLEAN_FALSE:
        return text in BOOLEAN_TRUE
    raise NacConfigError(
        "%s must be a boolean (yes/no, true/false, on/off, 1/0, y/n, t/f, in any case), got %r: nothing was sent"
        % (name, value)
    )


def check_number(name, value, low, high, whole=False, low_open=False, unit="seconds"):
    """``value`` unless it is not a number (a whole number, with ``whole``) from ``low`` (excluded with ``low_open``)
    to ``high``: then NacConfigError naming the option ``name``, its range and the value."""
    number = isinstance(value, int) if whole else isinstance(value, (int, float))
    if not number or isinstance(value, bool) or not (low < value if low_open else low <= value) or not value <= high:
        shown = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else _digits(value)
        high = "%g" % high if isinstance(high, float) else high
        raise NacConfigError(
            "%s must be %s %s %s, got %s"
            % (
                name,
                "a whole number of" if whole else "a number of",
                unit,
                "greater than %s and at most %s" % (low, high) if low_open else "from %s to %s" % (low, high),
                shown,
            )
        )
    return value


def _digits(value):
    """A huge whole number as a message names it (its digits could be too many to convert to text)."""
    return "a number of about %d digits" % (value.bit_length() * 0.30103 + 1)


def check_concurrency(value):
    """Raise NacConfigError unless ``value`` is a whole number from 1 to MAX_CONCURRENCY."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_CONCURRENCY:
        raise NacConfigError("concurrency must be a whole number from 1 to %d, got %r" % (MAX_CONCURRENCY, value))
    return value


def check_unreachable_timeout(value):
    """Raise NacConfigError unless ``value`` is a number of seconds from 0 to UNREACHABLE_TIMEOUT_MAX."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= UNREACHABLE_TIMEOUT_MAX:
        raise NacConfigError(
            "unreachable_timeout must be a number of seconds from 0 (never wait) to %d, got %r"
            % (UNREACHABLE_TIMEOUT_MAX, value)
        )
    return float(value)


def settle_seconds(settle_timeout, timeout):
    """nac_device's settle window: ``settle_timeout``; by default SETTLE_TIMEOUT (60 s), or ``timeout`` when
    that is longer (at most SETTLE_TIMEOUT_MAX). A short ``timeout`` (to fail fast) never shortens the window: a
    commit may land long after its reply was lost, whatever the client waited for that reply."""
    default = max(SETTLE_TIMEOUT, min(timeout, SETTLE_TIMEOUT_MAX))
    seconds = default if settle_timeout is None else settle_timeout
    if not 0 <= seconds <= SETTLE_TIMEOUT_MAX:
        raise NacConfigError(
            "settle_timeout must be a number of seconds from 0 to %d, got %s" % (SETTLE_TIMEOUT_MAX, seconds)
        )
    return seconds


def check_connection(api_url, **given):
    """Raise NacConfigError naming the first unusable connection option (never showing a secret). ``given``: the
    other connection options by name; one not given is its record's default (CONNECTION_DEFAULTS)."""
    unknown = sorted(set(given) - set(CONNECTION_OPTIONS))
    if unknown:
        raise TypeError("check_connection() takes no option %s" % ", ".join(unknown))
    option = dict(CONNECTION_DEFAULTS, **given)
    _check_api_url(api_url)
    _check_credentials(option["api_key"], option["username"], option["password"], option["tenant"])
    validate_certs = boolean(option["validate_certs"], "validate_certs")
    max_retries = option["max_retries"]
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise NacConfigError("max_retries must be a whole number, 0 or more, got %r" % (max_retries,))
    check_number("timeout", option["timeout"], 0, TIMEOUT_MAX, low_open=True)
    check_number("max_reply_mb", option["max_reply_mb"], 1, REPLY_MB_MAX, whole=True, unit="MiB")
    check_number("max_list_items", option["max_list_items"], 1, LIST_ITEMS_MAX, whole=True, unit="items")
    check_number("max_list_mb", option["max_list_mb"], 1, LIST_MB_MAX, whole=True, unit="MiB")
    if validate_certs and option["ca_path"]:
        check_ca_path(option["ca_path"])


def _check_api_url(api_url):
    if not api_url:
        raise NacConfigError("api_url is required: set the option api_url or the environment variable NAC_API_URL")
    if not isinstance(api_url, str) or not URL_FORM.match(api_url):
        raise NacConfigError(
            "api_url must be an http:// or https:// address such as https://nac.example.com "
            "(no spaces, query or fragment), got %r" % strip_userinfo(str(api_url or ""))
        )
    if USERINFO.match(api_url):
        raise NacConfigError(
            "api_url must not contain credentials (user:password@): give them as username and "
            "password, or api_key, got %r (an @ in its path must be written %%40)" % strip_userinfo(api_url)
        )


def _check_credentials(api_key, username, password, tenant):
    if api_key and (username or password):
        raise NacConfigError(
            "give either api_key or username and password, not both "
            "(the NAC_API_KEY, NAC_USERNAME and NAC_PASSWORD environment variables count too)"
        )
    if not api_key and not (username and password):
        if username or password:
            raise NacConfigError(
                "username and password go together: %s is missing"
                % ("password (NAC_PASSWORD)" if username else "username (NAC_USERNAME)")
            )
        raise NacConfigError(
            "no credentials: set api_key (NAC_API_KEY), or username and password (NAC_USERNAME, NAC_PASSWORD)"
        )
    for name, value in (("api_key", api_key), ("username", username), ("password", password), ("tenant", tenant)):
        problem = credential_problem(name, value)
        if problem:
            raise NacConfigError("%s %s; nothing was sent" % (name, problem))
