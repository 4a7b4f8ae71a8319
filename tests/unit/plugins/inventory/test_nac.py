# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Unit tests of the inventory plugin netaccess.nac.nac: host naming, host variables, grouping, sanitised
group names, Constructable options, caching and errors, against the in-process NAC emulator (whose
request counters prove which requests were, or were not, sent)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat

import pytest
from ansible.errors import AnsibleParserError
from ansible.plugins.loader import inventory_loader

from ansible_collections.netaccess.nac.plugins.inventory.nac import host_names, host_vars
from ansible_collections.netaccess.nac.plugins.plugin_utils import inventory_values as values
from ansible_collections.netaccess.nac.tests.emulator.nac_emulator import Emulator
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_members as members
from ansible_collections.netaccess.nac.tests.unit.helpers import inventory_source as source
from ansible_collections.netaccess.nac.tests.unit.helpers import parse_inventory as parse

ADMIN_KEY = "nac-demo-admin-key"
NOACCESS_KEY = "nac-demo-noaccess-key"
LIST, INTENTS, FIRE = "GET /api/device", "GET /api/intent", "POST /api/intent/dot1x_status/fire"

DEVICES = [
    dict(id=1, hostname="cam-01", group="Cameras", profile="Camera", macs=["02:00:00:20:00:10"], ips=["10.20.0.10"]),
    dict(
        id=2, hostname="printer-01", group="Printers", profile="Printer", ips=["10.30.0.10"]
    ),  # no MAC: UNAUTHENTICATED
    dict(id=3, hostname="dup-host", group="Cameras", profile="Camera", macs=["02:00:00:20:00:11"], ips=["10.20.0.11"]),
    dict(id=4, hostname="DUP-HOST", group="Cameras", profile="Camera", macs=["02:00:00:20:00:12"], ips=["10.20.0.12"]),
    dict(
        id=5, hostname="nostatus-01", group="Cameras", profile="Camera", macs=["02:00:00:20:00:13"], ips=["10.20.0.13"]
    ),
    dict(id=6, hostname="odd-01", group="Cameras", profile="Camera", macs=["02:00:00:20:00:14"], ips=["10.20.0.14"]),
    dict(
        id=7, hostname="bad-reply-01", group="Cameras", profile="Camera", macs=["02:00:00:20:00:15"], ips=["10.20.0.15"]
    ),
]
OVERRIDES = {
    "nostatus-01": {"omit_status": True},
    "odd-01": {"status": "Not Authorised/Quarantine", "message": "Posture check failed"},
    "bad-reply-01": {"status": 42},  # not a string: this device's query fails, the others do not
}


@pytest.fixture
def emulator():
    with Emulator(config=dict(devices=DEVICES, dot1x=dict(overrides=OVERRIDES))).start() as emu:
        yield emu


def hostvars(inventory, host):
    return dict((k, v) for k, v in inventory.get_host(host).vars.items() if not k.startswith("inventory_"))


# -- naming and host variables (pure) -------------------------------------------------------------


def test_unique_hostnames_are_the_host_names():
    names, warnings = host_names([dict(id=1, hostname="cam-01"), dict(id=2, hostname="Printer-01")])
    assert names == ["cam-01", "Printer-01"] and warnings == []


def test_shared_hostnames_become_hostname_id_with_a_warning_naming_them():
    records = [dict(id=3, hostname="dup"), dict(id=9, hostname="x"), dict(id=4, hostname="DUP")]
    names, warnings = host_names(records)
    assert names == ["dup_3", "x", "DUP_4"]
    assert warnings == ["hostname 'dup' is shared by 2 devices (ids 3, 4): their hosts are named dup_3, DUP_4"]


def test_a_suffixed_name_never_takes_another_devices_name():
    names, _warnings = host_names([dict(id=3, hostname="a"), dict(id=4, hostname="a"), dict(id=5, hostname="a_3")])
    assert names == ["a_3_3", "a_4", "a_3"]
    assert len(set(names)) == 3


def test_names_that_only_look_alike_are_different_hosts_and_canonical_spellings_one_name():
    records = [
        dict(id=1, hostname="strasse-01"),
        dict(id=2, hostname="stra\u00dfe-01"),
        dict(id=3, hostname="caf\u00e9-01"),  # NFC
        dict(id=4, hostname="cafe\u0301-01"),  # NFD: the same name
        dict(id=5, hostname="Kiosk-01"),
        dict(id=6, hostname="\u212aiosk-01"),  # KELVIN SIGN: the same name
    ]
    names, warnings = host_names(records)
    assert names[:2] == ["strasse-01", "stra\u00dfe-01"]
    assert names[2:] == ["caf\u00e9-01_3", "cafe\u0301-01_4", "Kiosk-01_5", "\u212aiosk-01_6"]
    assert len(warnings) == 2 and "ids 3, 4" in warnings[0] and "ids 5, 6" in warnings[1]


def test_devices_that_share_an_id_are_hosts_of_their_own_and_a_warning_names_them():
    records = [dict(id=500, hostname="shared-a"), dict(id=7, hostname="x"), dict(id=500, hostname="shared-b")]
    names, warnings = host_names(records)
    assert names == ["shared-a", "x", "shared-b"]
    assert warnings == [
        (
            "the device list (GET /api/device) shows the same id for several devices (id 500: shared-a, shared-b): "
            "ids are meant to be unique, so whatever targets such an id (a status query) cannot tell those devices "
            "apart; check them in the NAC"
        )
    ]
    same, _warnings = host_names([dict(id=500, hostname="twice"), dict(id=500, hostname="TWICE")])
    assert same == ["twice_500", "TWICE_500_500"]


def test_an_empty_hostname_gets_a_name_from_the_id():
    names, warnings = host_names([dict(id=8, hostname=" ")])
    assert names == ["nac_device_8"]
    assert warnings == ["device id 8 has an empty hostname: its host is named nac_device_8"]


def test_host_vars_take_what_the_record_shows():
    record = dict(
        id=1,
        hostname="cam-01",
        group={"id": 4, "name": "Cameras"},
        profile="Camera",
        macs="02:00:00:00:00:01",
        ips=["10.0.0.1"],
        extra=True,
    )
    assert host_vars(record) == dict(
        nac_id=1,
        nac_hostname="cam-01",
        nac_group="Cameras",
        nac_profile="Camera",
        nac_ips=["10.0.0.1"],
        nac_record=record,
    )
    assert "nac_group" not in host_vars(dict(id=2, hostname="x", group=7))


def test_host_vars_of_a_status_entry_and_of_a_failed_query():
    record = dict(id=1, hostname="cam-01")
    entry = dict(
        id=1, hostname="cam-01", status="AUTHENTICATED", auth_method="EAP-TLS", username="cam-01", message=None
    )
    assert host_vars(record, entry) == dict(
        nac_id=1,
        nac_hostname="cam-01",
        nac_record=record,
        nac_dot1x_status="AUTHENTICATED",
        nac_auth_method="EAP-TLS",
        nac_username="cam-01",
        nac_dot1x_message=None,
    )
    failed = dict(entry, status="ERROR", auth_method=None, username=None, error="No reply")
    assert host_vars(record, failed)["nac_dot1x_error_message"] == "No reply"


# -- the plugin against the emulator --------------------------------------------------------------


def test_verify_file_wants_names_ending_in_nac_yml(tmp_path):
    plugin = inventory_loader.get("netaccess.nac.nac")
    for name, wanted in (("nac.yml", True), ("site.nac.yaml", True), ("inventory.yml", False), ("nac.yml.bak", False)):
        path = tmp_path / name
        path.write_text("plugin: netaccess.nac.nac\n")
        assert bool(plugin.verify_file(str(path))) is wanted, name


def test_a_source_that_names_the_plugin_under_another_name_gets_a_hint(tmp_path, monkeypatch):
    plugin = inventory_loader.get("netaccess.nac.nac")
    warnings = []
    monkeypatch.setattr(plugin.display, "warning", warnings.append)
    (tmp_path / "dot1x.yml").write_text("# the NAC\nplugin: 'netaccess.nac.nac'  # its devices\ndot1x_status: true\n")
    (tmp_path / "other.yml").write_text("plugin: ansible.builtin.constructed\n")
    assert not plugin.verify_file(str(tmp_path / "dot1x.yml"))
    assert not plugin.verify_file(str(tmp_path / "other.yml"))
    assert len(warnings) == 1 and "must be a file whose name ends with nac.yml or nac.yaml" in warnings[0]
    assert "rename it (for example to %s)" % (tmp_path / "dot1x.nac.yml") in warnings[0]


def test_without_dot1x_status_one_list_request_and_no_status_query(emulator, tmp_path):
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY))
    assert emulator.request_counts() == {LIST: 1}
    assert members(inventory, "nac_devices") == [
        "DUP-HOST_4",
        "bad-reply-01",
        "cam-01",
        "dup-host_3",
        "nostatus-01",
        "odd-01",
        "printer-01",
    ]
    assert not [name for name in inventory.groups if name.startswith("nac_dot1x")]
    assert hostvars(inventory, "printer-01") == dict(
        nac_id=2,
        nac_hostname="printer-01",
        nac_group="Printers",
        nac_profile="Printer",
        nac_macs=[],
        nac_ips=["10.30.0.10"],
    )  # no nac_record: only where record_var asks for it
    assert "nac_dot1x_status" not in hostvars(inventory, "cam-01")


def test_dot1x_status_groups_by_status_with_sanitised_names(emulator, tmp_path):
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, dot1x_status="true", concurrency=3))
    assert emulator.request_counts() == {LIST: 1, INTENTS: 1, FIRE: len(DEVICES)}
    assert members(inventory, "nac_dot1x_authenticated") == ["DUP-HOST_4", "cam-01", "dup-host_3"]
    assert members(inventory, "nac_dot1x_unauthenticated") == ["printer-01"]
    assert members(inventory, "nac_dot1x_unknown") == ["nostatus-01"]
    assert members(inventory, "nac_dot1x_not_authorised_quarantine") == ["odd-01"]  # as keyed_groups sanitise
    assert members(inventory, "nac_dot1x_error") == ["bad-reply-01"]
    odd = hostvars(inventory, "odd-01")
    assert (odd["nac_dot1x_status"], odd["nac_dot1x_message"]) == ("Not Authorised/Quarantine", "Posture check failed")
    failed = hostvars(inventory, "bad-reply-01")
    assert failed["nac_dot1x_status"] == "ERROR" and "'status' is int" in failed["nac_dot1x_error_message"]
    cam = hostvars(inventory, "cam-01")
    assert (cam["nac_dot1x_status"], cam["nac_auth_method"], cam["nac_username"]) == (
        "AUTHENTICATED",
        "EAP-TLS",
        "cam-01",
    )
    assert "nac_dot1x_error_message" not in cam


def test_devices_sharing_an_id_are_two_hosts_with_one_status_query(emulator, tmp_path):
    emulator.seed([dict(id=500, hostname="shared-a", macs=["02:00:00:50:00:01"]), dict(id=500, hostname="shared-b")])
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, dot1x_status="true"))
    assert emulator.request_counts()[FIRE] == len(DEVICES) + 1  # id 500 once
    assert emulator.model.admin_fires(None)["500"] == 1
    first, second = hostvars(inventory, "shared-a"), hostvars(inventory, "shared-b")
    assert (first["nac_id"], second["nac_id"]) == (500, 500)
    assert first["nac_dot1x_status"] == second["nac_dot1x_status"] and second["nac_hostname"] == "shared-b"


def test_constructable_options_see_the_host_variables(emulator, tmp_path):
    path = source(
        tmp_path,
        api_url=emulator.url,
        api_key=ADMIN_KEY,
        dot1x_status="true",
        compose="{first_ip: 'nac_ips[0]'}",
        groups="{needs_attention: \"nac_dot1x_status != 'AUTHENTICATED'\"}",
        keyed_groups="[{key: nac_dot1x_status, prefix: status}, {key: nac_group, prefix: grp}]",
    )
    inventory = parse(path)
    assert hostvars(inventory, "cam-01")["first_ip"] == "10.20.0.10"
    assert members(inventory, "needs_attention") == ["bad-reply-01", "nostatus-01", "odd-01", "printer-01"]
    assert members(inventory, "status_Not_Authorised_Quarantine") == ["odd-01"]
    assert members(inventory, "grp_Printers") == ["printer-01"]


def test_record_var_true_sets_nac_record_and_constructed_options_read_it_either_way(emulator, tmp_path):
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, record_var="true"))
    assert hostvars(inventory, "printer-01") == dict(
        nac_id=2,
        nac_hostname="printer-01",
        nac_group="Printers",
        nac_profile="Printer",
        nac_macs=[],
        nac_ips=["10.30.0.10"],
        nac_record=dict(DEVICES[1], macs=[]),
    )
    path = source(
        tmp_path,
        name="constructed.nac.yml",
        api_url=emulator.url,
        api_key=ADMIN_KEY,
        compose="{record_id: 'nac_record.id'}",
        keyed_groups="[{key: nac_record.group, prefix: rec}]",
    )
    inventory = parse(path)
    printer = hostvars(inventory, "printer-01")
    assert str(printer["record_id"]) == "2" and "nac_record" not in printer  # a string before 2.19
    assert members(inventory, "rec_Printers") == ["printer-01"]


def test_strict_compose_fails_on_an_undefined_variable(emulator, tmp_path):
    path = source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, strict="true", compose="{x: 'nac_no_such_var'}")
    with pytest.raises(Exception, match="nac_no_such_var"):
        parse(path)


def cached_source(tmp_path, emulator, **options):
    return source(
        tmp_path,
        api_url=emulator.url,
        api_key=ADMIN_KEY,
        cache="true",
        cache_plugin="ansible.builtin.jsonfile",
        cache_connection=str(tmp_path / "cache"),
        cache_timeout=3600,
        **options,
    )


def test_a_cached_run_sends_no_request(emulator, tmp_path):
    first = parse(cached_source(tmp_path, emulator, dot1x_status="true"))
    assert emulator.request_counts() == {LIST: 1, INTENTS: 1, FIRE: len(DEVICES)}
    emulator.reset()
    second = parse(
        cached_source(tmp_path, emulator, dot1x_status="true", keyed_groups="[{key: nac_profile, prefix: p}]")
    )
    assert emulator.request_counts() == {}
    for group in ("nac_devices", "nac_dot1x_authenticated", "nac_dot1x_error", "nac_dot1x_not_authorised_quarantine"):
        assert members(second, group) == members(first, group)
    assert hostvars(second, "odd-01") == hostvars(first, "odd-01")
    assert members(second, "p_Printer") == ["printer-01"]  # constructed afresh from the cached data


def test_flushing_the_cache_fetches_again_and_a_different_query_has_its_own_entry(emulator, tmp_path):
    parse(cached_source(tmp_path, emulator))
    parse(cached_source(tmp_path, emulator), cache=False)  # ansible-inventory --flush-cache
    assert emulator.request_counts() == {LIST: 2}
    inventory = parse(cached_source(tmp_path, emulator, dot1x_status="true"))  # not served the status-less entry
    assert emulator.request_counts() == {LIST: 3, INTENTS: 1, FIRE: len(DEVICES)}
    assert members(inventory, "nac_dot1x_unauthenticated") == ["printer-01"]


def test_the_cache_holds_no_credential(emulator, tmp_path):
    parse(cached_source(tmp_path, emulator, dot1x_status="true"))
    files = list((tmp_path / "cache").iterdir())
    assert files and not [f for f in files if ADMIN_KEY in f.read_text() or ADMIN_KEY in f.name]


# -- errors: the client's messages, no credential, nothing half-done --------------------------------


def test_a_bad_key_is_a_clear_error_without_the_key(emulator, tmp_path):
    with pytest.raises(AnsibleParserError) as caught:
        parse(source(tmp_path, api_url=emulator.url, api_key="wrong-key-5ecret", dot1x_status="true"))
    message = str(caught.value)
    assert "'Server error' (HTTP 500)" in message and "api_key" in message and "5ecret" not in message
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert FIRE not in emulator.request_counts()


def test_no_intent_access_fails_before_any_status_query(emulator, tmp_path):
    with pytest.raises(AnsibleParserError, match="may not fire the intent dot1x_status") as caught:
        parse(source(tmp_path, api_url=emulator.url, api_key=NOACCESS_KEY, dot1x_status="true"))
    assert NOACCESS_KEY not in str(caught.value)
    assert emulator.request_counts() == {LIST: 1, INTENTS: 1}


def test_the_same_account_lists_devices_without_dot1x_status(emulator, tmp_path):
    inventory = parse(source(tmp_path, api_url=emulator.url, api_key=NOACCESS_KEY))
    assert len(members(inventory, "nac_devices")) == len(DEVICES)


def test_an_unreachable_service_names_the_address(tmp_path):
    with pytest.raises(AnsibleParserError, match=r"Could not connect to the NAC API at http://127\.0\.0\.1:9"):
        parse(source(tmp_path, api_url="http://127.0.0.1:9", api_key=ADMIN_KEY, max_retries=0))


@pytest.mark.parametrize(
    "options, expected",
    [
        (dict(api_key=ADMIN_KEY, concurrency=0), "concurrency must be a whole number from 1 to 256, got 0"),
        (dict(), "no credentials: set api_key (NAC_API_KEY), or username and password"),
        (
            dict(api_key=ADMIN_KEY, username="u", password="p-5ecret"),
            "give either api_key or username and password, not both",
        ),
    ],
)
def test_bad_options_are_named(emulator, tmp_path, monkeypatch, options, expected):
    for name in ("NAC_API_KEY", "NAC_USERNAME", "NAC_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AnsibleParserError) as caught:
        parse(source(tmp_path, api_url=emulator.url, **options))
    assert expected in str(caught.value) and "5ecret" not in str(caught.value)
    assert emulator.request_counts() == {}


def test_connection_options_come_from_the_environment(emulator, tmp_path, monkeypatch):
    monkeypatch.setenv("NAC_API_URL", emulator.url)
    monkeypatch.setenv("NAC_USERNAME", "svc-ansible")
    monkeypatch.setenv("NAC_PASSWORD", "nac-demo-password")
    monkeypatch.setenv("NAC_TENANT", "nac-demo-tenant")
    monkeypatch.delenv("NAC_API_KEY", raising=False)
    inventory = parse(source(tmp_path, dot1x_status="true"))
    assert members(inventory, "nac_dot1x_unauthenticated") == ["printer-01"]
    monkeypatch.setenv("NAC_TENANT", "another-tenant")
    with pytest.raises(AnsibleParserError, match="Server error"):
        parse(source(tmp_path))


def test_credentials_refused_while_querying_fail_the_inventory(emulator, tmp_path, monkeypatch):
    """A 403 on one status query is the same for every device: no half inventory with error groups."""
    from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacAuthError, NacClient

    fire = NacClient.fire_intent_steps  # (the status batch's queries, steps on one event loop)

    def refuse_the_third(client, target_id, *args, **kwargs):
        if target_id == 3:
            raise NacAuthError("Access refused (HTTP 403) to POST /api/intent/dot1x_status/fire: the account needs ...")
        return (yield from fire(client, target_id, *args, **kwargs))

    monkeypatch.setattr(NacClient, "fire_intent_steps", refuse_the_third)
    with pytest.raises(AnsibleParserError, match=r"Access refused \(HTTP 403\)"):
        parse(source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, dot1x_status="true", concurrency=1))
    assert emulator.request_counts()[FIRE] == 2  # devices 1 and 2 were answered, nothing after the refusal


def planted(tmp_path):
    """The one cache file, rewritten by "another user": cam-01 renamed planted-01."""
    (cached,) = list((tmp_path / "cache").iterdir())
    text = cached.read_text()  # JSON (2.19+: inside a "__payload__" string, its quotes escaped)
    assert "cam-01" in text
    cached.write_text(text.replace("cam-01", "planted-01"))
    return cached


@pytest.mark.parametrize("how", ["writable", "symlink", "owner"])
def test_a_cache_file_that_is_not_ours_is_not_used_and_the_nac_is_read_again(emulator, tmp_path, capsys, how):
    """Before: a cache file that another local user rewrote was used with no request (a planted host)."""
    parse(cached_source(tmp_path, emulator))
    cached = planted(tmp_path)
    if how == "writable":
        os.chmod(str(cached), 0o666)
    elif how == "symlink":
        target = tmp_path / "elsewhere.json"
        os.rename(str(cached), str(target))
        os.symlink(str(target), str(cached))
    elif os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    else:
        os.chown(str(cached), 4242, -1)
    emulator.reset()
    capsys.readouterr()
    inventory = parse(cached_source(tmp_path, emulator))
    assert emulator.request_counts() == {LIST: 1}  # read from the NAC again
    assert "planted-01" not in inventory.hosts and "cam-01" in inventory.hosts
    warned = "".join(capsys.readouterr().err.split())  # (before 2.19 a warning is wrapped at 80 columns)
    assert "netaccess.nac.nacinventory:thecachefile%s" % cached in warned and "notused" in warned


def test_the_cache_is_made_private_and_a_file_of_ours_is_used(emulator, tmp_path):
    parse(cached_source(tmp_path, emulator))
    (cached,) = list((tmp_path / "cache").iterdir())
    assert stat.S_IMODE(os.lstat(str(tmp_path / "cache")).st_mode) == 0o700
    emulator.reset()
    inventory = parse(cached_source(tmp_path, emulator))
    assert emulator.request_counts() == {}  # ours: used
    assert "cam-01" in inventory.hosts and stat.S_IMODE(os.lstat(str(tmp_path / "cache")).st_mode) == 0o700
    assert not stat.S_IMODE(os.lstat(str(cached)).st_mode) & 0o022  # as Ansible's cache plugin writes it


def test_a_cache_directory_that_is_a_symbolic_link_is_not_followed(emulator, tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir(mode=0o755)
    os.symlink(str(real), str(tmp_path / "cache"))
    parse(cached_source(tmp_path, emulator))
    assert stat.S_IMODE(os.lstat(str(real)).st_mode) == 0o755  # never changed through the link
    emulator.reset()
    parse(cached_source(tmp_path, emulator))
    assert emulator.request_counts() == {LIST: 1}
    assert "cannotbeused" in "".join(capsys.readouterr().err.split())


def test_the_inventory_masks_a_credential_that_the_nac_echoes_in_its_host_variables(tmp_path):
    """A NAC whose statuses echo the Authorization header (the emulator's hostile echo): no form of the key in any
    host variable."""
    with Emulator(hostile=dict(on=True, canary=str(tmp_path), echo=True)).start() as echoing:
        inventory = parse(source(tmp_path, api_url=echoing.url, api_key=ADMIN_KEY, dot1x_status="true"))
    assert hostvars(inventory, "cam-01")["nac_auth_method"] == "Bearer ********"
    text = repr(dict((name, host.get_vars()) for name, host in inventory.hosts.items()))
    assert ADMIN_KEY not in text and ADMIN_KEY.replace("-", "%2D") not in text


@pytest.mark.skipif(values.Origin is None, reason="ansible-core before 2.19 copies no value")
def test_ansible_keeps_each_server_value_once_however_many_variables_and_hosts_hold_it(emulator, tmp_path):
    from ansible.inventory.manager import InventoryManager
    from ansible.parsing.dataloader import DataLoader

    path = source(tmp_path, api_url=emulator.url, api_key=ADMIN_KEY, record_var="true")
    manager = InventoryManager(loader=DataLoader(), sources=[path])
    cam, odd = (manager.get_host(name).vars for name in ("cam-01", "odd-01"))
    assert cam["nac_hostname"] is cam["nac_record"]["hostname"] and cam["nac_id"] is cam["nac_record"]["id"]
    assert cam["nac_macs"][0] is cam["nac_record"]["macs"][0]
    assert cam["nac_group"] is odd["nac_group"] is odd["nac_record"]["group"]  # "Cameras", once
    assert cam["nac_record"] == DEVICES[0] and cam["nac_macs"] is not cam["nac_record"]["macs"]  # (copied by Ansible)


def test_the_shared_strings_are_bounded_and_a_string_many_hosts_share_is_one_object_again(monkeypatch):
    monkeypatch.setattr(values, "SHARED_STRINGS", 4)
    shared = values.Shared("/x/devices.nac.yml")
    group = shared.made("Cameras")
    assert shared.made("Cameras") is group and shared.made("{{ x }}") == "{{ x }}"
    for name in ("cam-01", "cam-02", "cam-03"):
        shared.made(name)
    assert len(shared) <= 4 and shared.made("Cameras") == "Cameras"
    assert shared.made("Cameras") is shared.made("Cameras")


@pytest.mark.skipif(values.Origin is None, reason="ansible-core before 2.19 tags no value")
def test_the_shared_values_carry_the_tags_origin_gives_them_in_one_record_of_tags_for_each_kind():
    from ansible.module_utils._internal._datatag import AnsibleTagHelper
    from ansible.template import is_trusted_as_template

    shared = values.Shared("/x/devices.nac.yml")
    origin = values.Origin(description="<inventory plugin 'netaccess.nac.nac' with source '/x/devices.nac.yml'>")
    plain, other, template, other_template = (shared.made(text) for text in ("cam-01", "cam-02", "{{ x }}", "{{ y }}"))
    first, second = values.inert(6, shared), values.inert(7, shared)
    for value, text in ((plain, "cam-01"), (template, "{{ x }}"), (first, 6)):
        assert value == text and AnsibleTagHelper.tags(value) == AnsibleTagHelper.tags(origin.tag(values.inert(text)))
    assert is_trusted_as_template(plain) and not is_trusted_as_template(template)
    assert plain._ansible_tags_mapping is other._ansible_tags_mapping
    assert template._ansible_tags_mapping is other_template._ansible_tags_mapping is not plain._ansible_tags_mapping
    assert first._ansible_tags_mapping is second._ansible_tags_mapping and second == 7
