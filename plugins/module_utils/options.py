# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The options shared by every entry point, declared once, and their bounds (no Ansible imports).

``CONNECTION_OPTIONS`` is the table of the connection options: the modules' argument spec
(module.py), the inventory plugin and the event source (dot1x_events.py) are built from it, and
a unit test checks that the doc fragment ``netaccess.nac.connection``, the inventory plugin's and
the event source's documentation match it. ``check_connection`` and ``check_concurrency`` are
the one check of each bound, raising NacConfigError with one wording wherever the option is given.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import collections
import re

from ansible_collections.netaccess.nac.plugins.module_utils.errors import NacConfigError
from ansible_collections.netaccess.nac.plugins.module_utils.secrets import USERINFO, credential_problem, strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.settle import SETTLE_TIMEOUT
from ansible_collections.netaccess.nac.plugins.module_utils.tls import check_ca_path

# name -> (environment variable, type, default, secret). Each is a NacClient argument.
CONNECTION_OPTIONS = collections.OrderedDict(
    (
        ("api_url", ("NAC_API_URL", "str", None, False)),
        ("api_key", ("NAC_API_KEY", "str", None, True)),
        ("username", ("NAC_USERNAME", "str", None, False)),
        ("password", ("NAC_PASSWORD", "str", None, True)),
        ("tenant", ("NAC_TENANT", "str", None, False)),  # an identifier, not a secret: never masked
        ("validate_certs", ("NAC_VALIDATE_CERTS", "bool", True, False)),
        ("ca_path", ("NAC_CA_PATH", "path", None, False)),
        ("timeout", ("NAC_TIMEOUT", "float", 30.0, False)),
        ("max_retries", (None, "int", 3, False)),
        ("unreachable_timeout", ("NAC_UNREACHABLE_TIMEOUT", "float", 60.0, False)),
        ("max_reply_mb", ("NAC_MAX_REPLY_MB", "int", 256, False)),  # MiB of one reply, at most
    )
)
SECRET_OPTIONS = tuple(name for name, (variable, kind, default, secret) in CONNECTION_OPTIONS.items() if secret)
# name -> default: the connection options of a client when none is given.
CONNECTION_DEFAULTS = collections.OrderedDict(
    (name, default) for name, (variable, kind, default, secret) in CONNECTION_OPTIONS.items()
)

MAX_CONCURRENCY = 256  # requests in flight at once, at most: the modules' concurrency, the connection pool
MAX_RETRIES_CAP = 10  # max_retries above this is capped: with the backoff of transport.py, at most about a minute
SETTLE_TIMEOUT_MAX = 3600  # nac_device's settle_timeout
UNREACHABLE_TIMEOUT_MAX = 3600  # unreachable_timeout
URL_FORM = re.compile(r"^https?://[^/?#\s\x00-\x1f\x7f]+(/[^?#\s\x00-\x1f\x7f]*)?\Z", re.IGNORECASE)


def connection_values(get):
    """{option: value} of every connection option, each read with ``get(name)``: NacClient's arguments."""
    return dict((name, get(name)) for name in CONNECTION_OPTIONS)


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
    """nac_device's settle window: ``settle_timeout``; by default settle.SETTLE_TIMEOUT (60 s), or ``timeout`` when
    that is longer (at most SETTLE_TIMEOUT_MAX). A short ``timeout`` (to fail fast) never shortens the window: a
    commit may land long after its reply was lost, whatever the client waited for that reply."""
    default = max(SETTLE_TIMEOUT, min(timeout, SETTLE_TIMEOUT_MAX))
    seconds = default if settle_timeout is None else settle_timeout
    if not 0 <= seconds <= SETTLE_TIMEOUT_MAX:
        raise NacConfigError(
            "settle_timeout must be a number of seconds from 0 to %d, got %s" % (SETTLE_TIMEOUT_MAX, seconds)
        )
    return seconds


def check_connection(
    api_url,
    api_key=None,
    username=None,
    password=None,
    tenant=None,
    validate_certs=True,
    ca_path=None,
    timeout=30.0,
    max_retries=3,
    max_reply_mb=256,
):
    """Raise NacConfigError naming the first unusable connection option (never showing a secret)."""
    _check_api_url(api_url)
    _check_credentials(api_key, username, password, tenant)
    if max_retries < 0:
        raise NacConfigError("max_retries must be 0 or more, got %s" % max_retries)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise NacConfigError("timeout must be a number of seconds greater than 0, got %r" % (timeout,))
    if isinstance(max_reply_mb, bool) or not isinstance(max_reply_mb, int) or max_reply_mb < 1:
        raise NacConfigError("max_reply_mb must be a whole number of MiB, 1 or more, got %r" % (max_reply_mb,))
    if validate_certs and ca_path:
        check_ca_path(ca_path)


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
