# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the module glue: what a module prints when its parameters are bad or when it has
a bug. Each case runs a real module's main() (or NacModule.run) and reads the JSON it prints."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


import pytest

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule, TaskFailed
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacHTTPError
from ansible_collections.netaccess.nac.plugins.modules import nac_device, nac_device_info, nac_dot1x_status
from ansible_collections.netaccess.nac.tests.unit.helpers import (
    NOWHERE,
    NothingMayBeSent,
    mounted,
    patch_module_args,
    printed,
)
from ansible_collections.netaccess.nac.tests.unit.helpers import run_module as run

KEY = "unit-k3y-0123456789"
PASSWORD = "unit-pa55-0123456789"
TENANT = "unit-tenant-0123456789"
URL = NOWHERE  # nothing is sent in these tests: every case fails before any request


def assert_no_secret(text):
    for secret in (KEY, PASSWORD):
        assert secret not in text


@pytest.mark.parametrize("devices", [[None], ["cam-01"], [{"hostname": "cam-01"}, 5]])
def test_a_devices_item_that_is_not_a_dict_fails_without_showing_credentials(capsys, devices):
    run(nac_device.main, api_key=KEY, tenant=TENANT, devices=devices)
    result, out = printed(capsys)
    assert result["failed"] is True
    assert_no_secret(out)  # the whole output: also what ansible-core adds to it


def test_credentials_in_api_url_are_refused_and_hidden(capsys):
    run(nac_device_info.main, api_url="http://svc:%s@127.0.0.1:9/" % PASSWORD, api_key=KEY)
    result, out = printed(capsys)
    assert result["msg"] == (
        "api_url must not contain credentials (user:password@): give them as username and password, "
        "or api_key, got 'http://127.0.0.1:9/' (an @ in its path must be written %40)"
    )
    assert_no_secret(out)


@pytest.mark.parametrize(
    "api_url",
    [
        "nac.example.com",
        "http://",
        "https://nac.example.com/?site=1",
        "https://nac.example.com#x",
        "https://nac.example.com\n",
        " https://nac.example.com",
        "http://nac example.com",
    ],
)
def test_an_unusable_api_url_is_named(capsys, api_url):
    run(nac_device_info.main, api_url=api_url, api_key=KEY)
    result, out = printed(capsys)
    assert result["msg"].startswith("api_url must be an http:// or https:// address such as https://nac.example.com")
    assert repr(api_url) in result["msg"]


def test_the_scheme_of_api_url_is_case_insensitive_and_trailing_slashes_harmless():
    with patch_module_args(dict(api_url="HTTPS://nac.example.com//", api_key=KEY)):
        assert NacModule(argument_spec={}).client.base_url == "HTTPS://nac.example.com"


@pytest.mark.parametrize("timeout", [0, -1, "nan", "inf"])
def test_timeout_must_be_a_positive_number(capsys, timeout):
    run(nac_device_info.main, api_key=KEY, timeout=timeout)
    result, out = printed(capsys)
    assert result["msg"].startswith("timeout must be a number of seconds greater than 0 and at most 86400, got ")
    assert "exception" not in result


@pytest.mark.parametrize(
    "main, args, message",
    [
        (
            nac_device.main,
            dict(hostname="cam-01", concurrency=10**7),
            "concurrency must be a whole number from 1 to 256, got 10000000",
        ),
        (
            nac_device.main,
            dict(hostname="cam-01", concurrency=0),
            "concurrency must be a whole number from 1 to 256, got 0",
        ),
        (
            nac_device.main,
            dict(hostname="cam-01", settle_timeout=-1),
            "settle_timeout must be a number of seconds from 0 to 3600, got -1",
        ),
        (
            nac_device.main,
            dict(hostname="cam-01", settle_timeout=4000),
            "settle_timeout must be a number of seconds from 0 to 3600, got 4000",
        ),
        (
            nac_dot1x_status.main,
            dict(hostname=["cam-01"], concurrency=10**7),
            "concurrency must be a whole number from 1 to 256",
        ),
        (
            nac_dot1x_status.main,
            dict(hostname=["cam-01", " "]),
            "Invalid hostname, nothing was sent: hostname[1] ' ' contains whitespace or a control character",
        ),
    ],
)
def test_out_of_range_options_fail_before_any_request(capsys, main, args, message):
    run(main, api_key=KEY, **args)
    result, out = printed(capsys)
    assert result["msg"].startswith(message)


# -- NacModule.run ----------------------------------------------------------------------------------


def run_action(action):
    """Run ``action`` in a NacModule; return the keyword arguments it failed with (if it did)."""
    with patch_module_args(dict(api_url=URL, api_key=KEY, _ansible_module_name="netaccess.nac.unit_test")):
        nac = NacModule(argument_spec={})
        failed_with = {}
        fail_json = nac.ansible.fail_json

        def spy(msg, **kwargs):
            failed_with.update(kwargs, msg=msg)
            fail_json(msg, **kwargs)

        nac.ansible.fail_json = spy
        with pytest.raises(SystemExit):
            nac.run(action)
    return failed_with


def test_a_bug_in_an_action_is_a_failure_naming_it_with_the_traceback(capsys):
    def action(nac):
        nac.change("device cam-01", None, {"hostname": "cam-01"})
        return {}["id " + KEY]

    failed_with = run_action(action)
    result, out = printed(capsys)
    assert result["failed"] is True
    assert result["msg"] == "Internal error in netaccess.nac.unit_test: KeyError: 'id ********' \u2014 please report it"
    assert "Traceback (most recent call last)" in failed_with["exception"] and "KeyError" in failed_with["exception"]
    assert result["changed"] is True  # what was done before the bug is still reported
    assert_no_secret(out)


def test_task_failures_and_api_errors_keep_their_own_messages(capsys):
    def failed(nac):
        raise TaskFailed("2 of 3 devices failed", devices=[1, 2, 3])

    def refused(nac):
        raise NacHTTPError(
            "The NAC API refused POST /api/device with HTTP 409.", method="POST", path="/api/device", status=409
        )

    assert "exception" not in run_action(failed)
    result, out = printed(capsys)
    assert (result["msg"], result["devices"]) == ("2 of 3 devices failed", [1, 2, 3])
    assert "exception" not in run_action(refused)
    result, out = printed(capsys)
    assert result["msg"] == "The NAC API refused POST /api/device with HTTP 409."
    assert result["failure"] == dict(type="NacHTTPError", method="POST", path="/api/device", status=409)


# -- connection options: missing, unusable, hidden ----------------------------------------------------


def test_a_missing_api_url_names_its_environment_variable(capsys, monkeypatch):
    monkeypatch.delenv("NAC_API_URL", raising=False)
    with patch_module_args(dict(api_key=KEY)):
        with pytest.raises(SystemExit):
            nac_device_info.main()
    result, out = printed(capsys)
    assert result["msg"] == "api_url is required: set the option api_url or the environment variable NAC_API_URL"
    assert_no_secret(out)


@pytest.mark.parametrize(
    "args, message",
    [
        (dict(), "no credentials: set api_key (NAC_API_KEY), or username and password (NAC_USERNAME, NAC_PASSWORD)"),
        (dict(username="svc"), "username and password go together: password (NAC_PASSWORD) is missing"),
        (dict(password=PASSWORD), "username and password go together: username (NAC_USERNAME) is missing"),
    ],
)
def test_missing_credentials_name_their_environment_variables(capsys, monkeypatch, args, message):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    run(nac_device_info.main, **args)
    result, out = printed(capsys)
    assert result["msg"] == message
    assert_no_secret(out)


@pytest.mark.parametrize(
    "args, option",
    [
        (dict(api_key=KEY + "\n"), "api_key"),
        (dict(api_key=KEY + "\u20ac"), "api_key"),
        (dict(username="svc", password=PASSWORD + "\r\n"), "password"),
        (dict(api_key=KEY, tenant="Lab\n"), "tenant"),
    ],
)
def test_credentials_that_cannot_be_sent_fail_cleanly_without_showing_them(capsys, args, option):
    run(nac_device_info.main, **args)
    result, out = printed(capsys)
    assert result["msg"].startswith(option + " contains ") and result["msg"].endswith("; nothing was sent")
    assert "exception" not in result and "Internal error" not in result["msg"]
    assert_no_secret(out)  # KEY and PASSWORD are part of every escaped form too


@pytest.mark.parametrize("password", ["p#ss-" + PASSWORD, "p?ss-" + PASSWORD, "p/ss-" + PASSWORD, "p@ss-" + PASSWORD])
def test_a_password_in_api_url_is_hidden_whatever_it_holds(capsys, password):
    run(nac_device_info.main, api_url="http://svc:%s@127.0.0.1:9/" % password, api_key=KEY)
    result, out = printed(capsys)
    assert result["failed"] is True
    assert_no_secret(out)


def test_the_tenant_is_not_masked_in_results(capsys):
    # A tenant equal to a value of the result (here a hostname given) must not turn it into ********: the tenant is
    # not a secret. A value equal to the api_key still is masked. Read in the module's own message, which every
    # ansible-core version returns.
    run(nac_device.main, api_key=KEY, tenant="Lab", hostname=["Lab", KEY])
    result, out = printed(capsys)
    assert result["msg"] == (
        "Invalid device request, nothing was sent: hostname must be one name (a string), got a list: "
        "['Lab', '********']"
    )
    assert_no_secret(out)


@pytest.mark.parametrize(
    "main, args, message",
    [
        (
            nac_device.main,
            dict(devices=[dict(hostname={"a": 1}, group="G", profile="P")]),
            "Invalid device request, nothing was sent: devices[0]: hostname must be one name (a string), got a mapping",
        ),
        (
            nac_device_info.main,
            dict(hostname=["cam-01", ["a", "b"]]),
            "Invalid hostname, nothing was sent: hostname[1] must be one name",
        ),
        (
            nac_dot1x_status.main,
            dict(hostname=["cam 01"]),
            "Invalid hostname, nothing was sent: hostname[0] 'cam 01' contains whitespace",
        ),
    ],
)
def test_hostnames_that_are_not_one_name_are_refused_before_any_request(capsys, main, args, message):
    run(main, api_key=KEY, **args)  # api_url is a closed port: a request would fail with another message
    result, out = printed(capsys)
    assert result["msg"].startswith(message)


# -- check mode: the read-only client is the backstop ---------------------------------------------


@pytest.mark.parametrize(
    "check_mode, read_only", [(True, False), (False, True)], ids=["check-mode", "read-only-module"]
)
def test_a_write_through_a_check_mode_modules_client_raises_before_sending(capsys, check_mode, read_only):
    transport = NothingMayBeSent()

    def action(nac):
        mounted(nac.client, transport)
        nac.client.create_device({"hostname": "cam-01", "group": "Cameras", "profile": "Camera"})
        return {"created": True}

    with patch_module_args(dict(api_url=URL, api_key=KEY, _ansible_check_mode=check_mode)):
        with pytest.raises(SystemExit):
            NacModule(argument_spec={}, read_only=read_only).run(action)
    result, out = printed(capsys)
    assert transport.sent == []
    assert result["failed"] is True and "created" not in result
    assert result["msg"] == "refusing to send POST /api/device: the client is read-only (check mode)"
    assert result["failure"]["type"] == "ReadOnlyViolation"


def test_a_module_not_in_check_mode_does_send_its_writes(capsys):
    transport = NothingMayBeSent()

    def action(nac):
        mounted(nac.client, transport)
        nac.client.create_device({"hostname": "cam-01", "group": "Cameras", "profile": "Camera"})

    with patch_module_args(dict(api_url=URL, api_key=KEY, max_retries=0)):
        with pytest.raises(SystemExit):
            NacModule(argument_spec={}).run(action)
    assert transport.sent == ["POST /api/device"]  # the same action, sent: the refusal above is check mode's


# -- masking a large result: only what may hold a secret is walked ----------------------------------------


def test_a_large_result_without_secrets_is_not_walked_and_one_with_a_secret_is_masked(capsys, monkeypatch):
    from ansible.module_utils import basic

    walked = []
    walk = basic.remove_values
    monkeypatch.setattr(basic, "remove_values", lambda value, strings: walked.append(value) or walk(value, strings))
    records = [dict(id=n, hostname="dev-%05d" % n, note='a "quoted" \\ value') for n in range(2000)]
    run_action(lambda nac: nac.ansible.exit_json(devices=records, few=["x"]))
    result, out = printed(capsys)
    assert result["devices"] == records and result["few"] == ["x"]
    assert not any(isinstance(value, dict) and "devices" in value for value in walked)
    assert any(isinstance(value, dict) and "few" in value for value in walked)  # the rest is walked as ever
    walked[:] = []
    # a secret in a record, as it is or escaped in JSON, is masked (by the glue's own masking, before Ansible's)
    for shown_as in (KEY, KEY + '"', "x\n" + KEY):
        tainted = records + [dict(id=9999, hostname="h", note=shown_as)]
        run_action(lambda nac, tainted=tainted: nac.ansible.exit_json(devices=tainted))
        result, out = printed(capsys)
        assert_no_secret(out)
        assert result["devices"][-1]["note"] in (
            "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER",
            shown_as.replace(KEY, "********"),
        )


def test_clean_values_name_only_large_values_without_any_form_of_a_secret():
    from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import LARGE_VALUE, clean_values

    big = [dict(id=n, text="t%d" % n) for n in range(LARGE_VALUE)]
    quoted = 'k"e\\y'
    assert list(clean_values(dict(big=big, small=big[:5], flag=True), {KEY})) == ["big"]
    assert clean_values(dict(big=big + [dict(id=1, text="pre" + quoted + "post")]), {quoted}) == {}
    assert clean_values(dict(big=big + [{KEY: 1}]), {KEY}) == {}  # in a key
    assert clean_values(dict(big=big + [12345]), {"234"}) == {}  # in a number's text
    assert clean_values(dict(big=big), {"ru"}) == {}  # a part of True: remove_values reads booleans so
