# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bounded by design, and TLS off only on purpose: one limit on a whole list across its pages (items and bytes),
implausible hostnames refused with their id, no recursion on a server's header, every number option bounded with
a clear message, a listing that stops once its controller is gone; booleans that are Ansible's words or fail, and
one warning when TLS is not verified. Through the real client over a transport that answers by URL."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
from ansible.module_utils.parsing.convert_bool import BOOLEANS_FALSE, BOOLEANS_TRUE

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    INSECURE_TLS,
    boolean,
    check_connection,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacConfigError, NacError, NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import nesting, partial_sign
from ansible_collections.netaccess.nac.plugins.module_utils.tasks import dot1x_events
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import check_options
from ansible_collections.netaccess.nac.plugins.modules import nac_device_info, nac_dot1x_status
from ansible_collections.netaccess.nac.tests.unit.helpers import URL, link, patch_module_args, printed
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run
from ansible_collections.netaccess.nac.tests.unit.helpers import site_client as client_for

KEY = "unit-k3y-0123456789"  # the key of a module run

ENV = {"NAC_API_URL": URL, "NAC_API_KEY": KEY}


def endless(records_per_page, pages=50):
    """A list whose every page names a next one: ``pages`` pages of ``records_per_page`` records."""
    routes = {}
    for number in range(pages):
        records = [
            {"id": number * records_per_page + n, "hostname": "d-%d-%d" % (number, n)} for n in range(records_per_page)
        ]
        url = URL + "/api/device" + ("?page=%d" % number if number else "")
        routes[url] = (200, records, {"Link": link("/api/device?page=%d" % (number + 1))})
    return routes


# -- one limit on the whole list ----------------------------------------------------------------


def test_a_list_that_pages_without_end_stops_at_max_list_items():
    client, site = client_for(endless(100), max_list_items=1000)
    with pytest.raises(NacResponseError) as caught:
        client.list_devices()
    assert "more than 1000 items (max_list_items) after 11 pages" in caught.value.message
    assert "NAC_MAX_LIST_ITEMS" in caught.value.message
    assert len(site.urls()) == 11  # not one page more


def test_a_list_that_pages_without_end_stops_at_max_list_mb_within_a_page():
    client, site = client_for(endless(8000, pages=20), max_list_mb=1)  # about 300 KB a page
    with pytest.raises(NacResponseError) as caught:
        client.list_devices(compact=True)
    message = caught.value.message
    assert "max_list_mb allows 1 MiB for the whole list" in message and "NAC_MAX_LIST_MB" in message
    assert len(site.urls()) <= 5


def test_a_list_within_the_limits_is_read_whole():
    routes = endless(100, pages=3)
    routes[URL + "/api/device?page=2"] = (200, routes[URL + "/api/device?page=2"][1], {})
    client, _site = client_for(routes, max_list_items=300)
    assert len(client.list_devices()) == 300


def test_the_defaults_pass_a_nac_of_a_million_devices():
    client, _site = client_for({})
    assert client.max_list_items >= 1000000 and client.max_list_mb * 1024 * 1024 >= 1000000 * 500


@pytest.mark.parametrize("compact", [False, True])
def test_an_implausible_hostname_is_refused_with_its_id(compact):
    records = [{"id": 1, "hostname": "a" * 253}, {"id": 2, "hostname": "b" * 254}]
    client, _site = client_for({URL + "/api/device": (200, records, {})})
    with pytest.raises(NacResponseError) as caught:
        client.list_devices(compact=compact)
    assert "item 1 (id 2) has a hostname of 254 characters, more than the 253 a hostname may have" in str(caught.value)


def test_a_hundred_megabyte_hostname_is_refused_not_used():
    records = [{"id": 7, "hostname": "h" * (100 * 1024 * 1024)}]
    client, _site = client_for({URL + "/api/device": (200, records, {})})
    with pytest.raises(NacResponseError, match=r"item 0 \(id 7\) has a hostname of 104857600 characters"):
        client.list_devices(compact=True)


# -- no recursion on a server's header ----------------------------------------------------------


def test_an_x_pagination_header_of_sixty_thousand_brackets_is_no_sign_and_no_recursion():
    assert partial_sign({"X-Pagination": "[" * 60000}, 3, 1) is None
    routes = {URL + "/api/device": (200, [{"id": 1, "hostname": "cam-01"}], {"X-Pagination": "[" * 60000})}
    client, _site = client_for(routes)
    assert [record["id"] for record in client.list_devices()] == [1]


def test_a_json_header_is_measured_without_recursion():
    assert nesting("[" * 10**6) == 10**6
    assert nesting('{"a": "[[[[", "b": [1, {"c": 2}]}') == 3
    assert partial_sign({"X-Pagination": json.dumps({"TotalCount": 150})}, 100, 1).startswith("the server says 150")


# -- every number bounded --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, words",
    [
        (dict(timeout=1e300), "timeout must be a number of seconds greater than 0 and at most 86400, got 1e+300"),
        (dict(timeout=10**400), "timeout must be a number of seconds greater than 0 and at most 86400, got a number"),
        (dict(max_reply_mb=10**400), "max_reply_mb must be a whole number of MiB from 1 to 65536"),
        (dict(max_list_items=0), "max_list_items must be a whole number of items from 1 to 1000000000, got 0"),
        (dict(max_list_mb=2.5), "max_list_mb must be a whole number of MiB from 1 to 1048576, got 2.5"),
        (dict(max_retries=-1), "max_retries must be a whole number, 0 or more, got -1"),
    ],
)
def test_a_number_option_out_of_bounds_is_named(changes, words):
    with pytest.raises(NacConfigError) as caught:
        check_connection(URL, api_key=KEY, **changes)
    assert words in caught.value.message


@pytest.mark.parametrize(
    "changes, words",
    [
        (dict(wait_timeout=10**400), "wait_timeout must be a number of seconds from 0 to 604800, got a number of"),
        (dict(wait_timeout=float("nan")), "wait_timeout must be a number of seconds from 0 to 604800, got nan"),
        (dict(wait_interval=1e300), "wait_interval must be a number of seconds greater than 0 and at most 86400"),
    ],
)
def test_the_wait_options_are_bounded(changes, words):
    options = dict(device_id=[1], hostname=None, all_devices=False, concurrency=8, wait_for="AUTHENTICATED")
    options.update(dict(wait_timeout=300, wait_interval=5.0), **changes)
    with pytest.raises(NacConfigError) as caught:
        check_options(**options)
    assert words in caught.value.message


@pytest.mark.parametrize(
    "args, words",
    [
        (dict(wait_timeout=10**400, device_id=[1], wait_for="AUTHENTICATED"), "wait_timeout must be a number of"),
        (dict(timeout=1e300, device_id=[1]), "timeout must be a number of seconds greater than 0 and at most 86400"),
    ],
)
def test_a_module_given_a_huge_number_fails_with_a_message_not_a_crash(capsys, args, words):
    run(nac_dot1x_status.main, api_key=KEY, **args)
    result, _out = printed(capsys)
    assert result["failed"] and words in result["msg"] and "exception" not in result


@pytest.mark.parametrize(
    "args, words",
    [
        ({"interval": 1e300}, "interval must be a number of seconds greater than 0 and at most 86400"),
        ({"timeout": 10**400}, "timeout must be a number"),
        ({"max_list_items": "many"}, "max_list_items must be a whole number"),
    ],
)
def test_the_event_source_bounds_its_numbers(args, words):
    with pytest.raises(NacConfigError) as caught:
        client, _options = dot1x_events.source_options(args, ENV)
        check_connection(**dict((name, client[name]) for name in client if name not in ("read_only", "pool_size")))
    assert words in caught.value.message


# -- the listing stops once the controller is gone --------------------------------------------------


def test_a_listing_stops_between_pages_once_the_controller_is_gone():
    asked = []

    def gone():
        asked.append(1)
        return "the controller that started this task is gone" if len(asked) >= 2 else None

    client, site = client_for(endless(10), should_stop=gone)
    with pytest.raises(NacError) as caught:
        client.list_devices()
    assert caught.value.message.startswith("GET /api/device?page=1: stopped listing after 2 pages: the controller")
    assert len(site.urls()) == 2


def test_every_module_watches_its_controller():
    with patch_module_args(dict(api_url=URL, api_key=KEY)):
        client = NacModule(argument_spec={}).client
    assert callable(client.should_stop) and client.should_stop() is None


# -- booleans and TLS ---------------------------------------------------------------------------------


def test_the_boolean_words_are_ansibles():
    for word in BOOLEANS_TRUE | BOOLEANS_FALSE:
        assert boolean(word, "validate_certs") is (word in BOOLEANS_TRUE)
        if isinstance(word, str):
            assert boolean(" %s " % word.upper(), "validate_certs") is (word in BOOLEANS_TRUE)


@pytest.mark.parametrize("value", ["ture", "", "2", "enabled", "  ", 2, 0.5, None, [], "yes please"])
def test_anything_else_fails_naming_the_option_and_the_value(value):
    with pytest.raises(NacConfigError) as caught:
        boolean(value, "validate_certs (from NAC_VALIDATE_CERTS)")
    assert caught.value.message.startswith("validate_certs (from NAC_VALIDATE_CERTS) must be a boolean")
    assert repr(value) in caught.value.message


@pytest.mark.parametrize("value", ["ture", "", "2", "enabled"])
def test_the_client_and_the_event_source_refuse_an_unknown_word_for_validate_certs(value):
    with pytest.raises(NacConfigError, match="validate_certs must be a boolean"):
        check_connection(URL, api_key=KEY, validate_certs=value)
    if not value:  # the source takes an empty variable as not set, as for every option: verification stays on
        assert dot1x_events.source_options({}, dict(ENV, NAC_VALIDATE_CERTS=value))[0]["validate_certs"] is True
        return
    with pytest.raises(NacConfigError, match=r"validate_certs \(from NAC_VALIDATE_CERTS\) must be a boolean"):
        dot1x_events.source_options({}, dict(ENV, NAC_VALIDATE_CERTS=value))
    with pytest.raises(NacConfigError, match=r"validate_certs must be a boolean"):
        dot1x_events.source_options({"validate_certs": value}, ENV)


def warning_texts(result):
    """The warnings of a module's result as text (ansible-core 2.19+ returns each as a structured event)."""
    return [w if isinstance(w, str) else w["event"]["msg"] for w in result.get("warnings") or ()]


def test_a_module_without_tls_verification_warns_once(capsys):
    run(nac_device_info.main, api_key=KEY, validate_certs=False, max_retries=0)
    result, _out = printed(capsys)
    assert warning_texts(result).count(INSECURE_TLS) == 1


def test_the_event_source_says_it_once_when_it_starts():
    client, _options = dot1x_events.source_options({"validate_certs": "no"}, ENV)
    assert dot1x_events.start_warnings(client) == [INSECURE_TLS]
    client, _options = dot1x_events.source_options({}, ENV)
    assert dot1x_events.start_warnings(client) == []


@pytest.mark.parametrize("value", ["ture", "", "2", "enabled"])
def test_a_module_refuses_an_unknown_word_for_validate_certs_from_the_environment(capsys, monkeypatch, value):
    monkeypatch.setenv("NAC_VALIDATE_CERTS", value)
    run(nac_device_info.main, api_key=KEY)
    result, _out = printed(capsys)
    assert result["failed"] and "validate_certs" in result["msg"] and "exception" not in result
