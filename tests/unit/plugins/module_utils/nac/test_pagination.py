# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Paginated lists: RFC 8288 Link headers read and followed (same origin, under api_url, bounded, never a
page twice), every other sign of a partial list refused, naming it, before anything is created, fired or
reported. Through the real client (NacClient) over a transport that answers by URL (no network), and one
real HTTP server for repeated Link header fields."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import http.server
import json

import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.nac import listing, pagination
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient, NacError, NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.links import (
    LinkError,
    next_links,
    origin,
    parse_links,
    path_under,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import partial_sign
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import dot1x_status
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    EXISTING,
    device_specs,
    ensure_devices,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import (
    DEVICES,
    KEY,
    PAGE1,
    PAGE2,
    SIGNS,
    URL,
    link,
    paged,
    site_client,
)

AUTHENTICATED = {"status": "AUTHENTICATED", "authMethod": "EAP-TLS", "username": "u", "message": None}


# -- RFC 8288: the Link field -------------------------------------------------------------------


def test_several_links_in_one_field_with_quoted_parameters_and_several_relation_types():
    value = (
        '<https://nac.example.com/api/device?page=1>; rel="first", '
        '<https://nac.example.com/api/device?page=2&a=1,2>;rel="next last";title="a, b; \\"c\\"", '
        "</api/device?page=9> ; REL = Prev ; rel=next"
    )
    assert parse_links(value) == [
        ("https://nac.example.com/api/device?page=1", {"rel": ["first"]}),
        ("https://nac.example.com/api/device?page=2&a=1,2", {"rel": ["next", "last"], "title": 'a, b; "c"'}),
        ("/api/device?page=9", {"rel": ["prev"]}),  # only the first rel counts (RFC 8288, section 3.3)
    ]


@pytest.mark.parametrize(
    "value",
    [
        "https://nac.example.com/api/device?page=2; rel=next",  # no <>
        "<https://nac.example.com/api/device?page=2; rel=next",  # no >
        '</api/device?page=2>; rel="next',  # a quoted string that does not end
        "</api/device?page=2>; =next",  # no parameter name
        "</api/device?page=2> rel=next",  # no ;
    ],
)
def test_a_link_field_that_breaks_the_syntax_is_an_error(value):
    with pytest.raises(LinkError):
        parse_links(value)


@pytest.mark.parametrize(
    "target, expected",
    [
        ("https://nac.example.com/api/device?page=2", "https://nac.example.com/api/device?page=2"),
        ("/api/device?page=2", "https://nac.example.com/api/device?page=2"),
        ("?page=2", "https://nac.example.com/api/device?page=2"),
        ("device?page=2", "https://nac.example.com/api/device?page=2"),
        ("../api/./device?page=2#top", "https://nac.example.com/api/device?page=2"),
        ("//nac.example.com/api/device?page=2", "https://nac.example.com/api/device?page=2"),
    ],
)
def test_a_next_link_is_resolved_against_the_address_of_its_reply(target, expected):
    assert next_links({"Link": link(target)}, URL + "/api/device?page=1") == [expected]


def test_only_next_links_about_this_reply_count():
    headers = {
        "Link": ", ".join(
            [link("/a", "first"), link("/b", "last"), '</c>; rel="next"; anchor="/elsewhere"', link("/d", "nextish")]
        )
    }
    assert next_links(headers, URL + "/api/device") == []
    assert next_links({"Link": '</d>; rel="next"; anchor="#x"'}, URL + "/api/device") == [URL + "/d"]


@pytest.mark.parametrize(
    "url, same",
    [
        ("https://NAC.example.com:443/api/device?page=2", True),
        ("https://nac.example.com/api/device?page=2", True),
        ("http://nac.example.com/api/device?page=2", False),
        ("https://nac.example.com:8443/api/device?page=2", False),
        ("https://nac.example.com.evil.test/api/device?page=2", False),
        ("https://evil.test/api/device?page=2", False),
        ("ftp://nac.example.com/api/device", False),
        ("https://nac.example.com:99999999/api/device", False),
    ],
)
def test_origin_is_scheme_host_and_port(url, same):
    assert (origin(url) == origin(URL)) is same
    assert (path_under(url, URL) == "/api/device" + ("?page=2" if "page" in url else "")) is same


def test_a_next_page_must_be_under_the_path_of_api_url():
    base = "https://nac.example.com/nac/"
    assert path_under("https://nac.example.com/nac/api/device?page=2", base) == "/api/device?page=2"
    assert path_under("https://nac.example.com/api/device?page=2", base) is None
    assert path_under("https://nac.example.com/nacx/api/device", base) is None


# -- following the pages ------------------------------------------------------------------------


@pytest.mark.parametrize("relative", [False, True])
def test_the_pages_are_read_in_order_and_joined(relative):
    client, site = site_client(paged(relative=relative, headers={"X-Total-Count": "150"}))
    assert client.list_devices() == DEVICES
    assert site.urls() == [URL + "/api/device", URL + "/api/device?page=2"]
    assert all(request.headers["Authorization"] == "Bearer " + KEY for request in site.sent)


def test_next_links_in_separate_link_header_fields_are_found():
    routes = paged()
    routes[URL + "/api/device"] = (200, PAGE1, [("Link", link("/x", "first")), ("Link", link("?page=2"))])
    client, site = site_client(routes)
    assert client.list_devices() == DEVICES


def test_intents_are_paged_the_same_way():
    routes = {
        URL + "/api/intent": (200, [{"tag": "ping"}], {"Link": link("?page=2")}),
        URL + "/api/intent?page=2": (200, [{"tag": "dot1x_status"}], {}),
    }
    client, site = site_client(routes)
    assert client.has_intent()
    assert len(site.sent) == 2


def test_a_base_path_is_kept_for_the_next_pages():
    base = "https://nac.example.com/nac"
    client, site = site_client(paged(base=base), base=base + "/")
    assert client.list_devices() == DEVICES
    assert site.urls() == [base + "/api/device", base + "/api/device?page=2"]


@pytest.mark.parametrize(
    "elsewhere",
    [
        "https://evil.test/api/device?page=2",
        "http://nac.example.com/api/device?page=2",  # the same host, but the key would go in clear text
        "https://nac.example.com:8443/api/device?page=2",
        "//evil.test/api/device?page=2",
    ],
)
def test_a_next_link_to_another_origin_is_never_followed(elsewhere):
    routes = {URL + "/api/device": (200, PAGE1, {"Link": link(elsewhere)})}
    client, site = site_client(routes)
    with pytest.raises(NacResponseError) as raised:
        client.list_devices()
    message = str(raised.value)
    assert "another origin" in message and "not followed" in message and elsewhere.lstrip("/") in message
    assert site.urls() == [URL + "/api/device"]  # nothing was sent there
    assert KEY not in message


def test_a_next_link_outside_the_path_of_api_url_is_not_followed():
    base = "https://nac.example.com/nac"
    routes = {base + "/api/device": (200, PAGE1, {"Link": link("/other/api/device?page=2")})}
    client, site = site_client(routes, base=base)
    with pytest.raises(NacResponseError, match="outside api_url"):
        client.list_devices()
    assert len(site.sent) == 1


def test_a_page_seen_twice_is_a_loop():
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2, {"Link": link("/api/device?page=1")})
    routes[URL + "/api/device?page=1"] = (200, PAGE1, {"Link": link("/api/device?page=2")})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match=r"leads back to /api/device\?page=2, a page already read \(a loop\)"):
        client.list_devices()
    assert len(site.sent) == 3


def test_a_link_back_to_the_very_same_page_is_a_loop_at_once():
    client, site = site_client({URL + "/api/device": (200, PAGE1, {"Link": link(URL + "/api/device")})})
    with pytest.raises(NacResponseError, match="a page already read"):
        client.list_devices()
    assert len(site.sent) == 1


def test_the_number_of_pages_is_bounded(monkeypatch):
    monkeypatch.setattr(listing, "MAX_PAGES", 3)
    routes = dict(
        (
            URL + "/api/device" + ("?page=%d" % n if n > 1 else ""),
            (200, [DEVICES[n]], {"Link": link("?page=%d" % (n + 1))}),
        )
        for n in range(1, 10)
    )
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match="still names a next page after 3 pages"):
        client.list_devices()
    assert len(site.sent) == 3


def test_two_different_next_links_are_refused():
    client, site = site_client({URL + "/api/device": (200, PAGE1, {"Link": link("?page=2") + ", " + link("?p=2")})})
    with pytest.raises(NacResponseError, match="names 2 next pages"):
        client.list_devices()


def test_an_unreadable_link_header_is_refused_naming_it():
    client, site = site_client({URL + "/api/device": (200, PAGE1, {"Link": "page 2 is at /api/device?page=2"})})
    with pytest.raises(NacResponseError, match="Link header cannot be read"):
        client.list_devices()


def test_a_page_that_is_not_an_array_is_named():
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, {"error": "gone"}, {})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match=r"GET /api/device\?page=2: .*expected a JSON array, got an object"):
        client.list_devices()


def test_a_bad_record_on_a_later_page_is_named_with_its_place_in_the_whole_list():
    routes = paged()
    routes[URL + "/api/device?page=2"] = (200, PAGE2[:3] + [{"hostname": "no-id"}], {})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match="item 103 has no int 'id'"):
        client.list_devices()


# -- every other sign of a partial list ---------------------------------------------------------


@pytest.mark.parametrize("headers, fragment", SIGNS)
def test_each_sign_of_a_partial_list_fails_naming_it(headers, fragment):
    client, site = site_client({URL + "/api/device": (200, PAGE1, headers)})
    with pytest.raises(NacResponseError) as raised:
        client.list_devices()
    assert str(raised.value).startswith("GET /api/device: ")
    assert fragment in str(raised.value)
    assert "refusing to use an incomplete list" in str(raised.value)
    assert raised.value.failure["path"] == "/api/device"


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Total-Count": "100"},
        {"X-Total-Count": "99"},  # fewer than listed (a device gone meanwhile): not a sign of more
        {"X-Total-Count": "many"},
        {"X-Pagination-Page-Count": "1", "X-Next-Page": ""},
        {"Content-Range": "items 0-99/100"},
        {"Content-Range": "bytes 0-9/10"},
        {"X-Pagination": '{"TotalCount": 100, "HasNext": false}'},
        {"X-Pagination": "not json"},
        {"Link": link("/api/device", "first") + ", " + link("/api/device", "last")},
    ],
)
def test_headers_that_agree_with_the_list_are_no_sign(headers):
    client, site = site_client({URL + "/api/device": (200, PAGE1, headers)})
    assert client.list_devices() == PAGE1


def test_the_signs_of_the_last_page_are_checked_against_every_page_read():
    routes = paged(headers={"X-Total-Count": "150", "Content-Range": "items 100-149/*"})
    client, site = site_client(routes)
    assert client.list_devices() == DEVICES
    routes = paged(headers={"X-Total-Count": "151"})
    client, site = site_client(routes)
    with pytest.raises(NacResponseError, match=r"GET /api/device\?page=2: the server says 151 devices"):
        client.list_devices()


@pytest.mark.parametrize(
    "body, keys",
    [
        ({"items": PAGE1, "next": URL + "/api/device?page=2", "total": 150}, "'next', 'items', 'total'"),
        ({"data": PAGE1, "links": {"next": "?page=2"}}, "'data', 'links'"),
        ({"results": PAGE1, "count": 150}, "'results', 'count'"),
    ],
)
def test_a_page_wrapped_in_an_object_is_named_by_its_keys(body, keys):
    client, site = site_client({URL + "/api/device": (200, body, {})})
    with pytest.raises(NacResponseError) as raised:
        client.list_devices()
    assert "expected a JSON array, got an object with %s, the shape of a page of a paginated list" % keys in str(
        raised.value
    )
    assert len(site.sent) == 1  # its next link is never followed either


def test_partial_sign_names_what_it_counts():
    assert partial_sign({"X-Total-Count": "3"}, 2, 1, "intents") == "the server says 3 intents (X-Total-Count: 3)"
    assert partial_sign({}, 0, 1) is None


# -- before anything is created, fired or reported ----------------------------------------------


def partial_list():
    return {URL + "/api/device": (200, PAGE1, {"X-Total-Count": "150"})}


def test_a_partial_list_creates_nothing():
    client, site = site_client(partial_list())
    specs = device_specs([dict(hostname=record["hostname"], group="g", profile="p") for record in DEVICES])
    with pytest.raises(NacError, match="X-Total-Count"):
        ensure_devices(specs, client.list_devices, client.create_device)
    assert site.urls("POST") == []


@pytest.mark.parametrize("target", [dict(all_devices=True), dict(hostname=["dev-120"]), dict(device_id=[120])])
def test_a_partial_list_fires_nothing(target):
    routes = partial_list()
    routes[URL + "/api/intent"] = (200, [{"tag": "dot1x_status"}], {})
    client, site = site_client(routes)
    with pytest.raises(NacError, match="X-Total-Count"):
        dot1x_status(client, **target)
    assert site.urls("POST") == []


def test_a_device_on_page_two_is_found_and_not_created_again():
    client, site = site_client(paged(relative=True))
    specs = device_specs([dict(hostname="dev-120", group="g", profile="p"), dict(hostname="DEV-005")])
    outcomes = ensure_devices(specs, client.list_devices, client.create_device)
    assert [(outcome.state, outcome.id) for outcome in outcomes] == [(EXISTING, 120), (EXISTING, 5)]
    assert site.urls("POST") == []


# -- one real server: two Link header fields, a relative reference --------------------------------


class TwoLinkFields(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):  # the standard library's name
        page = 2 if self.path.endswith("page=2") else 1
        body = json.dumps(PAGE1 if page == 1 else PAGE2).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Link", '</api/device>; rel="first"')
        if page == 1:
            self.send_header("Link", '<device?page=2>; rel="last next"')
        self.send_header("X-Total-Count", "150")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_real_reply_with_two_link_fields_and_a_relative_next_is_followed(local_http):
    client = NacClient(local_http(TwoLinkFields), api_key=KEY, max_retries=0)
    assert client.list_devices() == DEVICES
    client.close()


def test_the_page_bound_is_a_documented_constant():
    assert pagination.MAX_PAGES == 10000


@pytest.mark.parametrize(
    "link, under",
    [
        ("https://nac.example.com/nac/%2e%2e/admin/device?p=2", None),  # requote_uri sends it as /nac/../admin
        ("https://nac.example.com/nac/%2E%2E/admin/device", None),
        ("https://nac.example.com/nac/api/../../admin/device", None),
        ("https://nac.example.com/nac/api/%2e%2e%2f%2e%2e%2fadmin/device", None),  # a server that decodes %2f
        ("https://nac.example.com/nac/api/..%5c..%5cadmin/device", None),  # ... or reads a backslash as /
        ("https://nac.example.com/nac/./api/device?page=2", "/api/device?page=2"),
        ("https://nac.example.com/nac/api/x/%2e%2e/device?page=2", "/api/device?page=2"),
        ("https://nac.example.com/nac/%61pi/device", "/api/device"),  # an unreserved character, decoded as sent
    ],
)
def test_a_next_link_is_compared_after_dot_segment_removal(link, under):
    """Before: ``</nac/%2e%2e/admin/device?p=2>`` with api_url .../nac was followed (sent as /nac/../admin/...,
    which a normalising server answers outside the api_url's path)."""
    assert path_under(link, "https://nac.example.com/nac") == under


def test_a_next_link_outside_api_url_after_dot_segments_is_refused_as_a_cross_origin_one():
    base = "https://nac.example.com/nac"
    routes = {base + "/api/device": (200, PAGE1, {"Link": link("/nac/%2e%2e/admin/device?p=2")})}
    client, site = site_client(routes, base=base)
    with pytest.raises(NacResponseError, match="outside api_url") as raised:
        client.list_devices()
    assert "/admin/" in raised.value.message
    assert len(site.sent) == 1  # the next page was never asked for
