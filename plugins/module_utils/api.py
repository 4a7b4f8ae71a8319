# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure client of the NAC API (nac-api.md).

No Ansible imports: modules, an inventory plugin, scripts and unit tests all use it.
Errors are raised as NacError subclasses carrying method, path, HTTP status and the
server's own reason; no message ever contains a credential.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import email.utils
import json
import random
import re
import threading
import time
import traceback

try:
    import requests
    from requests.adapters import HTTPAdapter
    from urllib3.exceptions import HTTPError as Urllib3Error
except ImportError:
    HAS_REQUESTS = False
    REQUESTS_IMPORT_ERROR = traceback.format_exc()
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
URL_FORM = re.compile(r"^https?://[^/?#\s]+(/[^?#\s]*)?\Z", re.IGNORECASE)
USERINFO = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)@")
USER_AGENT = "netaccess.nac-ansible-collection"


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
        if not isinstance(api_url, str) or not URL_FORM.match(api_url):
            raise NacConfigError("api_url must be an http:// or https:// address such as https://nac.example.com "
                                 "(no spaces, query or fragment), got %r" % strip_userinfo(str(api_url or "")))
        if USERINFO.match(api_url):
            raise NacConfigError("api_url must not contain credentials (user:password@): give them as username and "
                                 "password, or api_key, got %r" % strip_userinfo(api_url))
        if api_key and (username or password):
            raise NacConfigError("give either api_key or username and password, not both "
                                 "(the NAC_API_KEY, NAC_USERNAME and NAC_PASSWORD environment variables count too)")
        if not api_key and not (username and password):
            if username or password:
                raise NacConfigError("username and password go together: %s is missing" % ("password" if username else "username"))
            raise NacConfigError("no credentials: set api_key (NAC_API_KEY), or username and password (NAC_USERNAME, NAC_PASSWORD)")
        if max_retries < 0:
            raise NacConfigError("max_retries must be 0 or more, got %s" % max_retries)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
            raise NacConfigError("timeout must be a number of seconds greater than 0, got %r" % (timeout,))
        self.base_url = api_url.rstrip("/")
        self.display_url = strip_userinfo(self.base_url)
        self.timeout = timeout
        self.max_retries = min(max_retries, MAX_RETRIES_CAP)
        self.read_only = read_only
        self._succeeded = threading.Event()  # set by the first 2xx reply; shared by the client's threads
        self._sleep = sleep
        self._secrets = [s for s in (api_key, password, tenant) if s]
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=min(max(pool_size, 1), MAX_CONCURRENCY), max_retries=0)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        # Passed with every request: a session-level verify loses to REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE.
        self.verify = (ca_path or True) if validate_certs else False
        self.session.headers.update({"Accept": "application/json", "User-Agent": USER_AGENT})
        if api_key:
            self.session.headers["Authorization"] = "Bearer %s" % api_key
        else:
            self.session.auth = (username, password)
        if tenant:
            self.session.headers["X-Tenant"] = tenant

    # -- the API (nac-api.md section 4) -------------------------------------------------

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
        if isinstance(exc, exceptions.SSLError) and "certificate" in str(exc).lower():
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
        """Belt and braces: remove every credential from an error's text."""
        for secret in self._secrets:
            error.message = error.message.replace(secret, "********")
            if error.reason:
                error.reason = error.reason.replace(secret, "********")
        error.args = (error.message,)
        return error

    def close(self):
        self.session.close()


def strip_userinfo(url):
    """The URL without its ``user:password@`` part (up to the last ``@`` of the authority)."""
    found = USERINFO.match(url)
    return url[:found.start(1)] + url[found.end(0):] if found else url


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
