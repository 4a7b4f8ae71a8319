# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read RFC 8288 ``Link`` headers and decide where a next page of a list may be fetched from, so that a paginated
list is followed only on ``api_url``'s origin and under its path (no credential sent elsewhere).

client.NacClient follows ``rel="next"`` links with these; the other signs of a partial list are in pagination.py.
"""

import re
import string
from typing import Dict, List, Optional, Tuple
from urllib.parse import unquote, urljoin, urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
UNRESERVED = frozenset(string.ascii_letters + string.digits + "-._~")
ESCAPED = re.compile("%([0-9A-Fa-f]{2})")
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


class LinkError(ValueError):
    """A Link header that does not follow RFC 8288's syntax (the text says where)."""


def parse_links(value: str) -> List[Tuple[str, Dict]]:
    """Parse an RFC 8288 ``Link`` field value into [(target, {param: value})]: the text of a server is read by the
    standard's grammar, never guessed at (several header fields joined with
    ", " are one value). ``rel`` is a list of lower-case relation types (space-separated in one ``rel``;
    only the first ``rel`` counts, as section 3.3 says). Raises LinkError at the first syntax error."""
    links, index, end = [], 0, len(value)
    while True:
        index = _skip(value, index, " \t,")
        if index >= end:
            return links
        if value[index] != "<":
            raise LinkError("expected '<' at position %d" % (index + 1))
        close = value.find(">", index)
        if close < 0:
            raise LinkError("no '>' after the '<' at position %d" % (index + 1))
        target, params = value[index + 1 : close].strip(), {}
        index = _skip(value, close + 1, " \t")
        while index < end and value[index] == ";":
            name, param, index = _param(value, _skip(value, index + 1, " \t"))
            if name == "rel" and "rel" not in params:
                params["rel"] = [kind.lower() for kind in param.split()]
            elif name != "rel":
                params.setdefault(name, param)
            index = _skip(value, index, " \t")
        if index < end and value[index] != ",":
            raise LinkError("unexpected %r at position %d" % (value[index], index + 1))
        links.append((target, params))


def _skip(value, index, characters):
    """Return the index of the first character at or after ``index`` that is not one of ``characters``."""
    while index < len(value) and value[index] in characters:
        index += 1
    return index


def _param(value, index):
    """Read one link-param: its (name, value, index after it): token [ "=" ( token / quoted-string ) ]."""
    found = TOKEN.match(value, index)
    if not found:
        raise LinkError("expected a parameter name at position %d" % (index + 1))
    name, index = found.group(0).lower(), _skip(value, found.end(), " \t")
    if index >= len(value) or value[index] != "=":
        return name, "", index
    index = _skip(value, index + 1, " \t")
    if index < len(value) and value[index] == '"':
        text, index = [], index + 1
        while index < len(value) and value[index] != '"':
            if value[index] == "\\" and index + 1 < len(value):
                index += 1
            text.append(value[index])
            index += 1
        if index >= len(value):
            raise LinkError("a quoted string that does not end")
        return name, "".join(text), index + 1
    found = TOKEN.match(value, index)
    if not found:
        raise LinkError("expected the value of %r at position %d" % (name, index + 1))
    return name, found.group(0), found.end()


def next_links(headers, url: str) -> List[str]:
    """Return the absolute URLs that the ``Link`` header of a reply read from ``url`` names as ``rel="next"``,
    each resolved against ``url`` (RFC 3986, section 5; RFC 8288, section 3.2), without fragment, in order,
    each once. A link whose ``anchor`` names another resource than this reply is about that one: left out."""
    value = headers.get("Link")
    if not value:
        return []
    found = []
    for target, params in parse_links(value):
        anchor = params.get("anchor")
        if "next" not in params.get("rel", ()) or anchor and urljoin(url, anchor).split("#")[0] != url.split("#")[0]:
            continue
        absolute = urljoin(url, target).split("#", 1)[0]
        if absolute not in found:
            found.append(absolute)
    return found


def origin(url: str) -> Optional[Tuple[str, str, int]]:
    """Return the (scheme, host, port) of an absolute http(s) URL, lower case, the port explicit, for comparing two
    origins; None if it has none."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        port = parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:  # a port that is not a number
        return None
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port


def path_under(url: str, base_url: str) -> Optional[str]:
    """Return the path and query of ``url`` relative to ``base_url`` ("/api/device?page=2"), when ``url`` is on the
    same origin (scheme, host, port) and under the path of ``base_url``; otherwise None.

    The paths are compared as a server would resolve them: after the unreserved characters are decoded (as
    requests' requote_uri does before sending: ``%2e`` is ``.``) and the dot segments removed (RFC 3986, section
    5.2.4), and again with every escape decoded and a backslash read as ``/`` (a server that decodes ``%2f``):
    ``/nac/%2e%2e/admin/device`` is outside ``/nac``. The path returned is the one compared, as it is sent."""
    if origin(url) is None or origin(url) != origin(base_url):
        return None
    parts, base = urlsplit(url), urlsplit(base_url).path
    under = []  # the path under base_url's, as it is sent (the first reading)
    for read in (_unquote_unreserved, lambda path: unquote(path).replace("\\", "/")):
        prefix, path = remove_dot_segments(read(base)).rstrip("/"), remove_dot_segments(read(parts.path))
        if not path.startswith(prefix + "/"):
            return None
        under.append(path[len(prefix) :])
    return under[0] + ("?" + parts.query if parts.query else "")


def _unquote_unreserved(path):
    """Decode the percent-encoded unreserved characters of ``path`` (RFC 3986, section 2.3), as requote_uri does."""
    return ESCAPED.sub(
        lambda found: chr(int(found.group(1), 16)) if chr(int(found.group(1), 16)) in UNRESERVED else found.group(0),
        path,
    )


def remove_dot_segments(path: str) -> str:
    """Remove the ``.`` and ``..`` segments of ``path`` as RFC 3986 (section 5.2.4) resolves them, so that a path is
    compared as a server reads it."""
    output = []
    for segment in path.split("/"):
        if segment == "..":
            if len(output) > 1:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if path.split("/")[-1] in (".", ".."):
        output.append("")  # "/a/b/.." is "/a/"
    return "/".join(output)
