# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure client of the NAC API (the API guide: docs/docsite/rst/api.rst).

No Ansible imports: modules, an inventory plugin, scripts and unit tests all use it.
Errors are raised as NacError subclasses carrying method, path, HTTP status and the
server's own reason; no message ever contains a credential.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import email.utils
import json
import os
import random
import re
import socket
import ssl
import threading
import time
import traceback
import unicodedata
from urllib.parse import quote, quote_plus, unquote, urlsplit

try:
    import requests
    from requests.adapters import HTTPAdapter
    from requests.auth import AuthBase
    from urllib3.exceptions import HTTPError as Urllib3Error
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
    AuthBase = object
else:
    HAS_REQUESTS = True
    REQUESTS_IMPORT_ERROR = None

DOT1X_INTENT = "dot1x_status"
DOT1X_INTENT_NAMES = "'Check 802.1x' / '802.1x status'"
# Retry policy (the table is in docs of the connection fragment and in the README):
# - reads and status queries: retried on connection errors and these statuses;
# - writes (POST /api/device): retried only when the request provably was not processed: HTTP 429
#   (refused before processing) and a connection that was never made. Every other failure of a
#   write is decided by the caller from the server's state (devices.py), never re-sent blindly.
RETRYABLE_STATUS = frozenset((429, 500, 502, 503, 504))
WRITE_RETRYABLE_STATUS = frozenset((429,))
MAX_RETRIES_CAP = 10  # max_retries above this is capped: with the backoff below, at most about a minute of waiting
RETRY_AFTER_CAP = 30.0
READ_CHUNK = 65536
BACKOFF_BASE = 0.5
BACKOFF_CAP = 10.0
EXCERPT_LEN = 160
MAX_CONCURRENCY = 256  # requests in flight at once, at most: the modules' concurrency, the connection pool
URL_FORM = re.compile(r"^https?://[^/?#\s\x00-\x1f\x7f]+(/[^?#\s\x00-\x1f\x7f]*)?\Z", re.IGNORECASE)
# Whatever it holds (a password may contain '/', '?', '#' or '@'), the userinfo runs to the last '@'.
USERINFO = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://)?(.*)@", re.DOTALL)
TLS_NAME_MISMATCH = re.compile(r"(?:Hostname|IP address) mismatch|doesn't match|not valid for", re.IGNORECASE)
USER_AGENT = "netaccess.nac-ansible-collection"

# The connection options, declared once (the doc fragment netaccess.nac.connection documents them):
# name -> (environment variable, type, default, secret). The modules' argument spec (module.py), the
# inventory plugin and the event source (dot1x_events.py) are built from it; each is a NacClient argument.
CONNECTION_OPTIONS = collections.OrderedDict((
    ("api_url", ("NAC_API_URL", "str", None, False)),
    ("api_key", ("NAC_API_KEY", "str", None, True)),
    ("username", ("NAC_USERNAME", "str", None, False)),
    ("password", ("NAC_PASSWORD", "str", None, True)),
    ("tenant", ("NAC_TENANT", "str", None, False)),  # an identifier, not a secret: never masked
    ("validate_certs", ("NAC_VALIDATE_CERTS", "bool", True, False)),
    ("ca_path", ("NAC_CA_PATH", "path", None, False)),
    ("timeout", ("NAC_TIMEOUT", "float", 30.0, False)),
    ("max_retries", (None, "int", 3, False)),
))


class NacError(Exception):
    """Any failure talking to the NAC API. ``failure`` is the structured form for results."""

    outcome_unknown = False  # true when a write may have been processed although it failed

    def __init__(self, message, method=None, path=None, status=None, reason=None, url=None):
        super(NacError, self).__init__(message)
        self.message = message
        self.method = method
        self.path = path
        self.status = status
        self.reason = reason
        self.url = url

    def __str__(self):
        return self.message

    @property
    def failure(self):
        failure = dict(type=type(self).__name__, method=self.method, path=self.path,
                       status=self.status, reason=self.reason, url=self.url)
        failure = dict((k, v) for k, v in failure.items() if v is not None)
        if self.outcome_unknown:
            failure["outcome_unknown"] = True
        return failure


class NacConfigError(NacError):
    """The client settings are not usable (no or two credential schemes, bad URL)."""


class NacConnectionError(NacError):
    """The server could not be reached or the exchange broke off.

    ``outcome_unknown`` is true when the request may have reached the server (a timeout or a
    dropped connection after sending): a write's effect must then be checked, never assumed.
    """

    def __init__(self, message, outcome_unknown=False, **kwargs):
        super(NacConnectionError, self).__init__(message, **kwargs)
        self.outcome_unknown = outcome_unknown

    @property
    def failure(self):
        failure = super(NacConnectionError, self).failure
        failure["outcome_unknown"] = self.outcome_unknown
        return failure


class NacAuthError(NacError):
    """Credentials refused (the API's 'Server error'), or a privilege / intent access missing."""


class NacNotFound(NacError):
    """HTTP 404."""


class NacHTTPError(NacError):
    """Any other non-success HTTP status (the server's reason is in ``reason``).

    ``outcome_unknown`` is true for a write answered with a 5xx status: the server may have
    committed it before failing, so its effect must be checked, never assumed.
    """

    def __init__(self, message, outcome_unknown=False, **kwargs):
        super(NacHTTPError, self).__init__(message, **kwargs)
        self.outcome_unknown = outcome_unknown


class NacServerError(NacHTTPError):
    """HTTP 500 (or another 5xx) after every retry, once an earlier request of this client succeeded:
    the credentials were accepted, so it is a fault of the server, not of the credentials."""


class NacResponseError(NacError):
    """A reply that is not what the API documents (not JSON, wrong shape)."""


class ReadOnlyViolation(NacError):
    """A write was attempted on a read-only client (check mode): a bug, never sent."""


def excerpt(text, limit=EXCERPT_LEN):
    """One short line of a (possibly HTML) body, for messages.

    Linear in the length of the text, also for unclosed tags: a block ends its search at the next
    opening of the same tag, a tag at the next ``<``.
    """
    text = re.sub(r"(?is)<(head|script|style)\b(?:(?!<\1\b).)*?</\1>", " ", text or "")
    text = re.sub(r"<[^<>]+>", " ", text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def decode_json(response):
    """The JSON of a reply body; ValueError also for JSON nested too deeply to decode."""
    try:
        return response.json()
    except RecursionError:
        raise ValueError("JSON nested too deeply")


def json_type(value):
    """The JSON name of a decoded value's type, for messages ('an object', 'null', ...)."""
    if value is None:
        return "null or an empty body"
    for kind, name in ((bool, "a boolean"), (dict, "an object"), (list, "an array"), (str, "a string"), ((int, float), "a number")):
        if isinstance(value, kind):
            return name
    return type(value).__name__


def server_reason(response):
    """The server's own words: a JSON body's message/error/fields, else a text excerpt."""
    try:
        body = decode_json(response)
    except ValueError:
        return excerpt(response.text) or None
    return body_reason(body)


def body_reason(body):
    """The server's own words in a decoded JSON body: its message/error/fields, else an excerpt."""
    if isinstance(body, dict):
        parts = [str(body[k]) for k in ("error", "message", "detail") if body.get(k)]
        fields = body.get("fields") or body.get("errors")
        if isinstance(fields, dict):
            parts.append("; ".join("%s: %s" % (k, v) for k, v in sorted(fields.items())))
        elif isinstance(fields, list):
            parts.append("; ".join(str(v) for v in fields))
        if parts:
            return excerpt(" - ".join(parts), 400)
    return excerpt(json.dumps(body), 400)


class NacClient:
    """The NAC API over one keep-alive ``requests.Session``.

    Exactly one credential scheme: ``api_key`` (Bearer), or ``username`` + ``password`` (Basic).
    ``tenant`` is sent as ``X-Tenant``. Reads and the status query are retried on connection
    errors and 429/500/502/503/504; device creation only on 429 and a connection never made
    (see RETRYABLE_STATUS). ``read_only`` refuses writes locally. ``timeout`` bounds each attempt
    as a whole: connecting, sending and receiving the complete reply.

    The API answers 'Server error' (HTTP 500) to bad credentials, and a failing server answers
    the same: a 500 that outlasts the retries is taken for refused credentials (NacAuthError)
    only while no request of this client has succeeded yet; afterwards it is a NacServerError.
    """

    def __init__(self, api_url, api_key=None, username=None, password=None, tenant=None,
                 validate_certs=True, ca_path=None, timeout=30.0, max_retries=3, pool_size=16,
                 read_only=False, sleep=time.sleep):
        if not HAS_REQUESTS:
            raise NacConfigError("the Python library 'requests' is required")
        if not api_url:
            raise NacConfigError("api_url is required: set the option api_url or the environment variable NAC_API_URL")
        if not isinstance(api_url, str) or not URL_FORM.match(api_url):
            raise NacConfigError("api_url must be an http:// or https:// address such as https://nac.example.com "
                                 "(no spaces, query or fragment), got %r" % strip_userinfo(str(api_url or "")))
        if USERINFO.match(api_url):
            raise NacConfigError("api_url must not contain credentials (user:password@): give them as username and "
                                 "password, or api_key, got %r (an @ in its path must be written %%40)" % strip_userinfo(api_url))
        if api_key and (username or password):
            raise NacConfigError("give either api_key or username and password, not both "
                                 "(the NAC_API_KEY, NAC_USERNAME and NAC_PASSWORD environment variables count too)")
        if not api_key and not (username and password):
            if username or password:
                raise NacConfigError("username and password go together: %s is missing"
                                     % ("password (NAC_PASSWORD)" if username else "username (NAC_USERNAME)"))
            raise NacConfigError("no credentials: set api_key (NAC_API_KEY), or username and password (NAC_USERNAME, NAC_PASSWORD)")
        for name, value in (("api_key", api_key), ("username", username), ("password", password), ("tenant", tenant)):
            problem = credential_problem(name, value)
            if problem:
                raise NacConfigError("%s %s; nothing was sent" % (name, problem))
        if max_retries < 0:
            raise NacConfigError("max_retries must be 0 or more, got %s" % max_retries)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise NacConfigError("timeout must be a number of seconds greater than 0, got %r" % (timeout,))
        if validate_certs and ca_path:
            check_ca_path(ca_path)
        self.base_url = api_url.rstrip("/")
        self.display_url = strip_userinfo(self.base_url)
        self.timeout = timeout
        self.max_retries = min(max_retries, MAX_RETRIES_CAP)
        self.read_only = read_only
        self._succeeded = threading.Event()  # set by the first 2xx reply; shared by the client's threads
        self._sleep = sleep
        if api_key:
            authorization = "Bearer %s" % api_key
        else:  # UTF-8, not the latin-1 of requests' own HTTPBasicAuth
            authorization = "Basic %s" % base64.b64encode(("%s:%s" % (username, password)).encode("utf-8")).decode("ascii")
        self._secrets = hidden_forms((api_key, password, authorization.split(" ", 1)[1]))
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=min(max(pool_size, 1), MAX_CONCURRENCY), max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        # Passed with every request: a session-level verify loses to REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE.
        self.verify = (ca_path or True) if validate_certs else False
        self.session.headers.update({"Accept": "application/json", "User-Agent": USER_AGENT})
        self.session.auth = _Authorization(authorization)  # set as auth, so that no ~/.netrc entry replaces it
        if tenant:
            self.session.headers["X-Tenant"] = tenant

    # -- the API (API guide section 4, docs/docsite/rst/api.rst) -----------------------

    def list_intents(self):
        """GET /api/intent: the intents the account may use (each has a ``tag``)."""
        return self._records("GET", "/api/intent", "tag", str)

    def has_intent(self, tag=DOT1X_INTENT):
        return any(intent["tag"] == tag for intent in self.list_intents())

    def list_devices(self):
        """GET /api/device: every device; each record has at least ``id`` and ``hostname``."""
        records = self._records("GET", "/api/device", "id", int)
        for index, record in enumerate(records):
            if not isinstance(record.get("hostname"), str):
                raise self._shape_error("GET", "/api/device", "item %d (id %s) has no string 'hostname'" % (index, record["id"]))
        return records

    def create_device(self, body):
        """POST /api/device. Re-sent only when it provably was not processed (429, connection never
        made); any other failure is raised, with ``outcome_unknown`` set when the server may have
        committed it. Returns the reply's JSON object, or None when the reply carries none (its
        body is not documented)."""
        reply = self.request("POST", "/api/device", body=body, write=True)
        return reply if isinstance(reply, dict) else None

    def fire_intent(self, target_id, tag=DOT1X_INTENT, payload=None):
        """POST /api/intent/<tag>/fire with ``additionalPayload`` {json: true}: a read, retried."""
        additional = {"json": True}
        additional.update(payload or {})
        path = "/api/intent/%s/fire" % tag
        reply = self.request("POST", path, body={"targetId": target_id, "additionalPayload": additional})
        if not isinstance(reply, dict):
            raise self._shape_error("POST", path, "expected a JSON object for target %s, got %s" % (target_id, json_type(reply)))
        return reply

    # -- transport ----------------------------------------------------------------------

    @property
    def succeeded(self):
        """Whether any request of this client has had a successful (2xx) reply."""
        return self._succeeded.is_set()

    def request(self, method, path, body=None, write=False, retry=True):
        """Send one request, retried as the policy above says; return the decoded JSON (None for an empty body)."""
        if write and self.read_only:
            raise ReadOnlyViolation("refusing to send %s %s: the client is read-only (check mode)" % (method, path),
                                    method=method, path=path)
        url = self.base_url + path
        retryable = WRITE_RETRYABLE_STATUS if write else RETRYABLE_STATUS
        attempt = 0
        while True:
            delay = None
            last = not retry or attempt >= self.max_retries
            try:
                response = self._send(method, url, body)
            except requests.exceptions.RequestException as exc:
                error = self._connection_error(method, path, exc)
                if last or isinstance(exc, requests.exceptions.SSLError) or (write and error.outcome_unknown):
                    raise error
            else:
                if response.status_code < 300:
                    self._succeeded.set()
                if response.status_code not in retryable or last:
                    return self._decode(method, path, response, lenient=write, attempts=attempt + 1)
                delay = retry_after(response.headers.get("Retry-After"))
            attempt += 1
            self._sleep(delay if delay is not None else backoff(attempt))

    def _send(self, method, url, body):
        """One exchange, bounded as a whole by ``timeout``: the reply is streamed and read against a
        deadline (each read's socket timeout is what is left), so a reply that drips in slowly ends
        as a ReadTimeout once the deadline passes, never later than one read after it."""
        deadline = time.monotonic() + self.timeout
        # Redirects are not followed: a POST would be re-sent as a GET (301/302), and X-Tenant to any host.
        response = self.session.request(method, url, json=body, timeout=self.timeout, verify=self.verify,
                                        allow_redirects=False, stream=True)
        if response._content is not False:  # a transport that gave the whole body at once (tests)
            return response
        try:
            sock = getattr(getattr(response.raw, "connection", None), "sock", None)
            chunks = []
            for chunk in _bounded(_chunks(response), sock, deadline):
                chunks.append(chunk)
        except (requests.exceptions.RequestException, OSError, Urllib3Error) as exc:
            response.close()
            if time.monotonic() >= deadline or "timed out" in str(exc).lower():
                raise requests.exceptions.ReadTimeout("the complete reply did not arrive within the timeout")
            if isinstance(exc, requests.exceptions.RequestException):
                raise
            raise requests.exceptions.ConnectionError(exc)
        response._content, response._content_consumed = b"".join(chunks), True
        return response

    def _decode(self, method, path, response, lenient=False, attempts=1):
        if response.status_code >= 300:
            raise self._http_error(method, path, response, write=lenient, attempts=attempts)
        if not response.content.strip():
            return None
        try:
            return decode_json(response)
        except ValueError:
            if lenient:
                return None  # a write's reply body is not documented: the caller re-reads
            raise self._scrubbed(NacResponseError(
                "%s %s: expected a JSON reply but got %s: %r" % (
                    method, path, response.headers.get("Content-Type", "no content type"), excerpt(response.text)),
                method=method, path=path, status=response.status_code, url=self.display_url))

    def _records(self, method, path, key, key_type):
        reply = self.request(method, path)
        if not isinstance(reply, list):
            raise self._shape_error(method, path, "expected a JSON array, got %s" % json_type(reply))
        for index, record in enumerate(reply):
            if not isinstance(record, dict) or not isinstance(record.get(key), key_type) or isinstance(record.get(key), bool):
                raise self._shape_error(method, path, "item %d has no %s %r: %s" % (
                    index, key_type.__name__, key, excerpt(json.dumps(record, default=str), 80)))
        return reply

    def _shape_error(self, method, path, what):
        return self._scrubbed(NacResponseError("%s %s: unexpected reply from %s: %s" % (method, path, self.display_url, what),
                                               method=method, path=path, url=self.display_url))

    def _http_error(self, method, path, response, write=False, attempts=1):
        status = response.status_code
        reason = server_reason(response)
        where = "%s %s" % (method, path)
        said = " The server said: %s" % reason if reason else ""
        tries = " (%d attempts)" % attempts if attempts > 1 else ""
        if status < 400:
            error = NacHTTPError("The NAC API answered %s with a redirect (HTTP %d) to %s, which is not followed: "
                                 "set api_url to the address the service redirects to (https:// instead of http://, "
                                 "for example)." % (where, status, strip_userinfo(response.headers.get("Location") or "nowhere")),
                                 method=method, path=path, status=status, reason=reason, url=self.display_url)
        elif status == 500 and not self.succeeded:
            error = NacAuthError(
                "The NAC API answered 'Server error' (HTTP 500) to %s%s. The API gives this reply for an invalid "
                "or missing API key (or a wrong username, password or tenant): check api_key / NAC_API_KEY, or "
                "username, password and tenant. If the credentials are right, the server itself failed.%s" % (where, tries, said),
                method=method, path=path, status=status, reason=reason, url=self.display_url)
        elif status >= 500:
            accepted = " (not of the credentials: an earlier request of this task was answered)" if status == 500 else ""
            error = NacServerError(
                "The NAC API failed on %s with HTTP %d%s: a fault of the server or of a proxy in front of it%s.%s"
                % (where, status, tries, accepted, said),
                outcome_unknown=write, method=method, path=path, status=status, reason=reason, url=self.display_url)
        elif status in (401, 403):
            if path.startswith("/api/intent/%s/" % DOT1X_INTENT):
                needs = "the privilege public_api and access to the intent %s (%s)" % (DOT1X_INTENT, DOT1X_INTENT_NAMES)
            else:
                needs = "the privilege public_api (and the feature's own privilege)"
            error = NacAuthError("Access refused (HTTP %d) to %s: the account needs %s.%s" % (status, where, needs, said),
                                 method=method, path=path, status=status, reason=reason, url=self.display_url)
        elif status == 404:
            error = NacNotFound("Not found (HTTP 404): %s.%s" % (where, said),
                                method=method, path=path, status=status, reason=reason, url=self.display_url)
        else:
            error = NacHTTPError("The NAC API refused %s with HTTP %d.%s" % (where, status, said),
                                 method=method, path=path, status=status, reason=reason, url=self.display_url)
        return self._scrubbed(error)

    def _connection_error(self, method, path, exc):
        exceptions = requests.exceptions
        url = self.display_url
        unknown = False
        if isinstance(exc, exceptions.SSLError) and TLS_NAME_MISMATCH.search(str(exc)):
            names = certificate_names(self.base_url, self.verify, self.timeout)
            text = ("TLS verification failed for %s: its certificate is for another name (%s), not %s. ca_path cannot fix "
                    "this: set api_url to an address the certificate names, or set validate_certs to false"
                    % (url, ", ".join(names) if names else "the names could not be read", urlsplit(self.base_url).hostname))
        elif isinstance(exc, exceptions.SSLError) and "certificate" in str(exc).lower():
            text = ("TLS verification failed for %s: %s. Trust its certificate with ca_path (a PEM bundle), "
                    "or set validate_certs to false" % (url, _tls_reason(exc)))
        elif isinstance(exc, exceptions.SSLError):
            text = ("TLS handshake with %s failed: %s. Is it an https:// service on that port (or an http:// one)?"
                    % (url, _tls_reason(exc)))
        elif isinstance(exc, exceptions.ConnectTimeout):
            text = "Timed out connecting to the NAC API at %s (timeout %ss)" % (url, self.timeout)
        elif isinstance(exc, exceptions.Timeout):
            unknown = True
            text = "No reply from the NAC API at %s within %ss to %s %s" % (url, self.timeout, method, path)
        elif isinstance(exc, exceptions.ConnectionError) and _refused_before_sending(exc):
            text = "Could not connect to the NAC API at %s: %s" % (url, _connect_reason(exc))
        elif isinstance(exc, exceptions.ConnectionError):
            unknown = True
            text = "The connection to the NAC API at %s broke off during %s %s: %s" % (url, method, path, excerpt(str(exc), 200))
        else:
            text = "Request %s %s to %s failed: %s" % (method, path, url, excerpt(str(exc), 200))
        return self._scrubbed(NacConnectionError(text, outcome_unknown=unknown, method=method, path=path, url=url))

    def _scrubbed(self, error):
        """Belt and braces: remove every credential, in every form (hidden_forms), from an error's text."""
        for secret in self._secrets:
            error.message = error.message.replace(secret, "********")
            if error.reason:
                error.reason = error.reason.replace(secret, "********")
        error.args = (error.message,)
        return error

    def close(self):
        self.session.close()


class _Authorization(AuthBase):
    """Sets the prepared ``Authorization`` header on every request."""

    def __init__(self, value):
        self.value = value

    def __call__(self, request):
        request.headers["Authorization"] = self.value
        return request


def strip_userinfo(url):
    """The URL without its ``user:password@`` part (everything up to its last ``@``)."""
    found = USERINFO.match(url)
    return url[:found.start(1)] + url[found.end(0):] if found else url


def url_password(url):
    """The password in a URL's userinfo (``user:password@``; the whole userinfo when it has no ``:``), or None."""
    found = USERINFO.match(url) if isinstance(url, str) else None
    if not found:
        return None
    user, colon, password = found.group(1).partition(":")
    return (password if colon else user) or None


def hidden_forms(values, api_url=None):
    """Every form in which the secrets ``values`` (and a password in ``api_url``) could be shown: as they are,
    escaped (repr, ascii, JSON, bytes) and URL-encoded (quote, quote_plus), longest first."""
    values = [value for value in values if isinstance(value, str) and value]
    password = url_password(api_url)
    if password:
        values += [password, unquote(password)]
    forms = set()
    for value in values:
        forms.update((value, repr(value)[1:-1], ascii(value)[1:-1], json.dumps(value)[1:-1], repr(value.encode("utf-8"))[2:-1],
                      quote(value), quote(value, safe=""), quote_plus(value), quote_plus(value, safe="")))
    return sorted((form for form in forms if form), key=len, reverse=True)


def credential_problem(name, value):
    """Why the credential option ``name`` cannot be sent in a header, or None. Never shows the value.

    Basic credentials are sent as UTF-8, so username and password may hold any printable character
    (the username no ``:``); an API key (a Bearer token, RFC 6750) and the X-Tenant header, printable
    ASCII only; none of them line breaks or other control characters.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        return "must be a string"
    for index, char in enumerate(value):
        where = "at its end" if index == len(value) - 1 else "at its start" if index == 0 else "at position %d" % (index + 1)
        if char in "\r\n\x85\u2028\u2029":
            return "contains a line break (%s), which cannot be sent in an HTTP header" % where
        if unicodedata.category(char) == "Cc":
            return "contains a control character (%s), which cannot be sent in an HTTP header" % where
        if name in ("api_key", "tenant") and not (" " <= char <= "~"):
            return "contains a character that is not ASCII (%s): it is sent as an HTTP header, which carries ASCII only" % where
        if char == " " and (name == "api_key" or (name == "tenant" and index in (0, len(value) - 1))):
            return "contains a space (%s), which the HTTP header would not carry as given" % where
        if name == "username" and char == ":":
            return "contains ':' (%s), which HTTP Basic authentication cannot carry in a username" % where
    return None


def check_ca_path(ca_path):
    """Raise NacConfigError unless ``ca_path`` is a readable directory or a file holding a PEM certificate."""
    if os.path.isdir(ca_path):
        if not os.access(ca_path, os.R_OK | os.X_OK):
            raise NacConfigError("ca_path %s is a directory that cannot be read" % ca_path)
        return
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cafile=ca_path)
    except FileNotFoundError:
        raise NacConfigError("ca_path %s does not exist: give the path of a PEM bundle of the certificate authorities to trust" % ca_path)
    except PermissionError:
        raise NacConfigError("ca_path %s cannot be read (permission denied)" % ca_path)
    except ssl.SSLError as error:
        if "NO_CERTIFICATE" in str(error).upper():
            raise NacConfigError("ca_path %s holds no PEM certificate (-----BEGIN CERTIFICATE-----): it must be a PEM bundle "
                                 "of the certificate authorities to trust (convert a DER file to PEM)" % ca_path)
        raise NacConfigError("ca_path %s is not a usable PEM bundle (%s): it must hold the PEM certificates of the "
                             "authorities to trust" % (ca_path, excerpt(str(error), 80)))
    except (OSError, ValueError) as error:
        raise NacConfigError("ca_path %s cannot be read: %s" % (ca_path, getattr(error, "strerror", None) or error))


def certificate_names(base_url, verify, timeout):
    """The names (DNS, IP) a server's certificate is for, read in a handshake that checks the certificate
    against ``verify`` (as requests does) but not its name; [] when they cannot be read."""
    parts = urlsplit(base_url)
    if verify is True:
        verify = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or requests.utils.DEFAULT_CA_BUNDLE_PATH
    try:
        context = ssl.create_default_context(**{"capath" if os.path.isdir(verify) else "cafile": verify})
        context.check_hostname = False
        with socket.create_connection((parts.hostname, parts.port or 443), timeout=timeout) as raw:
            with context.wrap_socket(raw, server_hostname=parts.hostname) as tls:
                cert = tls.getpeercert() or {}
    except (OSError, ValueError, TypeError):
        return []
    names = [value for kind, value in cert.get("subjectAltName", ()) if kind in ("DNS", "IP Address")]
    return names or [value for rdn in cert.get("subject", ()) for key, value in rdn if key == "commonName"]


def backoff(attempt, base=BACKOFF_BASE, cap=BACKOFF_CAP):
    """Jittered exponential backoff: the attempt-th wait, between half and all of base*2^(n-1)."""
    ceiling = min(cap, base * (2 ** (attempt - 1)))
    return random.uniform(ceiling / 2, ceiling)


def retry_after(value, cap=RETRY_AFTER_CAP, now=None):
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP date), capped; None if absent/bad."""
    if not value:
        return None
    value = value.strip()
    if re.match(r"^[0-9]+$", value):
        return min(float(value), cap)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), cap)


def _refused_before_sending(exc):
    """True when the connection was never made (refused, DNS failure), so nothing was sent."""
    text = repr(exc)
    return any(word in text for word in ("NewConnectionError", "NameResolutionError", "Connection refused",
                                         "Name or service not known", "nodename nor servname"))


def _tls_reason(exc):
    """The OpenSSL reason inside requests' wrapping, e.g. 'certificate verify failed: self-signed certificate'."""
    found = re.search(r"\[SSL(?:: [A-Z_]+)?\] ([^'\"()]+)", str(exc))
    return found.group(1).strip() if found else excerpt(str(exc), 200)


def _connect_reason(exc):
    text = str(exc)
    if "NameResolutionError" in text or "Name or service not known" in text or "nodename nor servname" in text:
        return "the host name could not be resolved"
    if "Connection refused" in text or "ConnectionRefused" in text:
        return "connection refused (is the service running and the port right?)"
    return excerpt(text, 200)


def _chunks(response):
    """The body of a streamed reply as it arrives: with urllib3 2, each chunk is at most one read
    from the socket (``read1``), so the deadline is checked between reads, not after the whole body."""
    raw = response.raw
    if hasattr(raw, "read1"):
        return iter(lambda: raw.read1(READ_CHUNK, decode_content=True), b"")
    return response.iter_content(READ_CHUNK)


def _bounded(chunks, sock, deadline):
    """The chunks of a streamed reply, each read given only the time left until ``deadline``."""
    chunks = iter(chunks)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise requests.exceptions.ReadTimeout("the complete reply did not arrive within the timeout")
        if sock is not None:
            sock.settimeout(left)
        try:
            yield next(chunks)
        except StopIteration:
            return
