# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Keep the cookies the service sets (a load balancer's affinity, say), bounded as browsers bound them (RFC 6265
6.1), so that a service cannot grow the client's memory or its requests' heads (no Ansible imports).
connections.Wire holds one jar and sends its Cookie line with every request.
"""

import http.cookiejar
import urllib.request

# The cookies the service may set, as browsers bound them (RFC 6265 6.1): at most this many, each at most this
# long (name and value), the Cookie line sent back at most this long; one with a control character is refused.
MAX_COOKIES = 50
MAX_COOKIE_BYTES = 4096
MAX_COOKIE_LINE = 8192


def cookie_jar() -> http.cookiejar.CookieJar:
    """Make an empty jar whose policy bounds what it keeps (``_CookiePolicy``)."""
    jar = http.cookiejar.CookieJar()
    jar.set_policy(_CookiePolicy(jar))
    return jar


def cookie_line(jar: http.cookiejar.CookieJar, url: str) -> list:
    """Give the Cookie field for a request to ``url`` as h11 takes it ([] when none, or when the line would pass
    MAX_COOKIE_LINE), so that a request carries back what the service set."""
    request = urllib.request.Request(url)
    jar.add_cookie_header(request)
    cookie = request.get_header("Cookie")
    if not cookie or len(cookie) > MAX_COOKIE_LINE:
        return []
    return [(b"Cookie", cookie.encode("latin-1", "replace"))]


def keep_cookies(jar: http.cookiejar.CookieJar, answer, url: str) -> None:
    """Keep the cookies ``answer`` (a response.Answer) sets for ``url``, as the jar's policy allows."""
    jar.extract_cookies(answer, urllib.request.Request(url))


class _CookiePolicy(http.cookiejar.DefaultCookiePolicy):
    """Bound the standard library's policy: a cookie is kept only while the jar holds fewer than MAX_COOKIES whose
    Cookie line stays within MAX_COOKIE_LINE, when its name and value are at most MAX_COOKIE_BYTES long and hold no
    control character (it would be sent back raw in the Cookie line)."""

    def __init__(self, jar=None):
        super(_CookiePolicy, self).__init__()
        self.jar = jar

    def set_ok(self, cookie, request):
        text = (cookie.name or "") + (cookie.value or "")
        if len(text) > MAX_COOKIE_BYTES or any(ord(char) < 32 or ord(char) == 127 for char in text):
            return False
        kept = list(self.jar)
        if (
            len(kept) >= MAX_COOKIES
            or sum(len(c.name) + len(c.value or "") + 3 for c in kept) + len(text) > MAX_COOKIE_LINE
        ):
            return False
        return super(_CookiePolicy, self).set_ok(cookie, request)
