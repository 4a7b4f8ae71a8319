#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# house: long because DOCUMENTATION, EXAMPLES and RETURN are 340 lines; the code below them is about 100 lines

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nac_device
short_description: Ensure devices exist in the NAC service
version_added: 0.1.0
description:
  - Makes one device (O(hostname)) or many (O(devices)) exist in the NAC service, each exactly once.
  - A device is identified by its hostname; a listed device is the same device only when it has the same
    name (see O(hostname)). A device that exists is left alone (the API has no update or delete); one that
    does not is created with one C(POST /api/device), which is never repeated blindly.
  - Every parameter is checked before any request is sent; a bad value fails the task, quoting it.
  - The bulk form lists the devices once, then creates only the missing ones, O(concurrency) at a
    time. When nothing is missing, the task sends exactly one request.
  - When a task would create more than one device, it creates the first alone and confirms it by reading the
    device list (within O(settle_timeout)) before it sends any other. When the list does not show it as requested
    (not listed, as a list capped without a sign or lagging beyond the window does; listed under another name;
    listed twice), no other creation is sent; that item fails naming the device created, its id, what the list
    showed and the likely cause, and the others fail as not attempted. A service that hides or renames what it
    stores costs one device per run, never a bulk. A bulk of N new devices takes N + 3 requests.
author:
  - netaccess.nac maintainers (@netaccess)
options:
  hostname:
    description:
      - Hostname of the device, for example V(cam-lobby-01). It is the device's identity - a device listed under
        this name exists and is left alone, else it is created - and is sent as given when the device is created.
      - Exactly one of O(hostname) and O(devices) is required.
      - One name, a string of at most 253 characters without whitespace or control characters
        (a whole number is read as its digits).
      - Names are compared without case for ASCII letters (V(CAM-01) is V(cam-01)); the exact rule, and what
        becomes of a name that only looks like a listed one (a lookalike), are in the notes.
      - When two or more listed devices have this hostname, the task fails and names their ids.
      - A list or mapping is refused, before any request, rather than turned into text; that is why the option's
        type is C(raw), not C(str).
    type: raw
  group:
    description:
      - Group of the device, sent when it is created.
      - Required, like O(profile), when the device has to be created. When any device to create
        lacks it, the task fails after listing the devices and before creating any.
      - For a device that exists and whose listed record shows another group, the task warns
        (compared exactly, case included) and changes nothing.
    type: str
  profile:
    description:
      - Profile of the device, sent when it is created. The profile determines how many IP/MAC
        pairs the device can have.
      - Required, like O(group), when the device has to be created.
    type: str
  macs:
    description:
      - MAC addresses of the device, sent as six colon-separated lower-case hex pairs
        (V(00:1a:2b:3c:4d:5e)). Also accepted, in any case, and normalised to that form are
        V(00-1A-2B-3C-4D-5E), V(001a.2b3c.4d5e) and V(001A2B3C4D5E).
      - Sent only when given (an empty list counts as not given). Without O(macs) and O(ips) the
        service creates the device without a MAC and allocates an IP address for every IP/MAC pair
        that the profile allows; with O(ips) alone it uses those addresses and no MAC; with both, it
        uses both. The API documents no rule for O(macs) without O(ips).
    type: list
    elements: str
  ips:
    description:
      - IPv4 addresses of the device in dotted notation (V(10.20.0.15)).
      - Sent only when given (an empty list counts as not given); see O(macs) for what their absence means.
    type: list
    elements: str
  devices:
    description:
      - "Bulk form, one item per device, each a mapping with the keys of the single form, for example
        C({hostname: cam-01, group: Cameras, profile: Camera}). Mutually exclusive with O(hostname), O(group),
        O(profile), O(macs) and O(ips)."
      - An item that is not such a mapping (a bare name such as C(cam-01)), that has a key of no option (C(mac),
        or C(hostname:cam-01) written without a space after the colon, which YAML reads as one key) or no
        C(hostname) is refused before any request, naming the item by its index and what to write instead.
      - 'Also taken as text that spells such a list in YAML or JSON, as an AWX survey answer arrives, for example
        C([{"hostname": "cam-01", "group": "Cameras", "profile": "Camera"}]). Text that spells no list fails the task
        in one line naming O(devices) and the shape expected.'
      - A hostname, MAC or IP address requested for two items is an error, reported before any request.
      - An item that fails does not stop the others; the task fails when any item failed, and still
        returns every item's result (in RV(devices); its message counts them and names the first failures).
      - Creating many devices shows a progress line on the controller every 10 s or so once it has run 5 s,
        see R(Progress of long tasks,ansible_collections.netaccess.nac.docsite.progress); V(NAC_PROGRESS=false)
        silences it.
    type: list
    elements: dict
    suboptions:
      hostname:
        description: Hostname of the device, as O(hostname) (one name; a list or mapping is refused).
        type: raw
        required: true
      group:
        description: Group of the device, as O(group); required when the device has to be created.
        type: str
      profile:
        description: Profile of the device, as O(profile); required when the device has to be created.
        type: str
      macs:
        description: MAC addresses, as O(macs).
        type: list
        elements: str
      ips:
        description: IPv4 addresses, as O(ips).
        type: list
        elements: str
  state:
    description:
      - V(present) is the only state; the API can neither update nor delete a device.
    type: str
    choices: [present]
    default: present
  concurrency:
    description:
      - How many devices the bulk form creates in parallel, from 1 to 256.
    type: int
    default: 8
  settle_timeout:
    description:
      - Seconds during which a creation whose outcome is uncertain is looked for in the device list
        before it may be sent again, at most O(max_retries) times in all. Which outcomes are uncertain,
        and how the list decides them, is in
        R(Retries and outcomes,ansible_collections.netaccess.nac.docsite.api_retries) of the API guide.
      - Defaults to 60 seconds, or to O(timeout) when that is longer (at most 3600). A short O(timeout), set to
        fail fast, never shortens the window, since a service may commit a creation long after its reply was lost,
        whatever the client waited for that reply. Raise it for a service that commits more slowly; V(0) reads
        the list once and re-sends at once what it does not show (not recommended).
      - A task that sent any creation again lists the devices once more at its end; a device that list shows
        twice is reported with both ids (the item fails), never as a clean success.
      - Every creation answered with an id is confirmed by one list for the whole task (its id listed under the
        requested name); an id that list does not show is looked for during this window too, then its item
        fails naming the likely cause (a capped list, a lagging read replica).
      - From 0 to 3600.
    type: float
  stored_names:
    description:
      - Whether a device to create is refused when the device list shows what is probably its stored name.
      - V(guard) (the default) refuses it. Some NACs store a shortened form of the name sent, the first DNS label
        of an FQDN (V(cam-01) for V(cam-01.example.com)) or the name without its trailing dot, and list only
        that; the next run would not find the requested name and would create the device again, one more on
        every run. So when such a form of a missing name is listed (compared without case, as O(hostname)), the
        item fails before anything is written, naming the listed device's id and name. Use the stored name as
        the hostname (in the inventory) to make the item find its device.
      - V(exact) compares names only as O(hostname) says, and creates the device. Use it when the listed device
        is another one (a device V(cam-01) beside a wanted V(cam-01.example.com)) on a NAC that stores names as
        sent.
      - The trade-off. V(guard) may refuse a device whose name is another device's first label, until you choose
        V(exact) for it; V(exact), on a NAC that shortens names, lets every run create one more device under the
        stored name (the first creation of each task is confirmed by reading before any other is sent, so one
        device per run, not one per item).
    type: str
    choices: [guard, exact]
    default: guard
  fail_on_drift:
    description:
      - Whether a device that exists but differs from the request fails its item (an audit), naming the device,
        its id and each field that differs (group, profile, MACs or IPs, where the listed record shows them and
        the request gives them).
      - V(false) (the default) only warns about such a device. Either way nothing is changed, since the API cannot
        update a device.
    type: bool
    default: false
notes:
  - How hostnames are compared (O(hostname), and each item's C(hostname) in O(devices)). A listed device has a
    requested hostname when both are the same name, that is canonically equivalent Unicode (their NFC forms are
    equal, so a decomposed C(café) is the composed one and the KELVIN SIGN is C(K)) and equal when ASCII letters
    are compared without case (RFC 4343, so V(CAM-01) is V(cam-01)). Nothing looser; C(straße-01) is not
    C(strasse-01) (Unicode case folding), a full-width C(ｃａｍ-01) is not C(cam-01) (compatibility forms,
    NFKC), and a listed C("cam-01 ") with a trailing space is not C(cam-01).
  - A device to create whose name a listed device matches only by such a looser rule (a lookalike) is not
    created. The item fails before anything is written, naming the lookalike with its id, because a NAC that
    compares names loosely would refuse it or confuse the two. Rename one of them, or create the device in
    the NAC; a device that exists gets a warning naming its lookalikes instead.
  - The API does not document the reply to a creation. The new device's id is taken from the reply
    when it carries one; otherwise one more device list (for all new devices at once) finds it.
  - Each item has one report, consistent with the last device list read after its creation. A hostname that list
    shows for several devices is reported with every id, never as not shown. A device created with an id in the
    reply beside which the list shows another device of that name keeps its id, with a warning naming both; a
    creation answered without an id, uncertain, or sent again, of which the list shows several, fails naming them.
  - Ids that the device list shows for several devices are named in a warning (the API promises unique ids).
  - Every creation is decided from the service's state, never guessed from an error; how each failure
    is retried or decided, and the one case no client can exclude, is in
    R(Retries and outcomes,ansible_collections.netaccess.nac.docsite.api_retries) of the API guide.
  - Do not wrap this module in C(retries)/C(until) (see the same section). It already retries what is
    safe to retry, and a new attempt of the task may send again the creations still in flight.
  - When the controller that started the task is gone (ansible-playbook was killed), the module sends
    no further creation; what was already sent is settled as above, and the devices not sent are
    reported with C(not attempted).
  - An existing device whose listed record visibly differs from the request (group, profile, MACs
    or IPs, where the record shows them and the request gives them) causes a warning, not a change.
    Group and profile are compared exactly, case included; MACs and IPs as sets of normalised values.
extends_documentation_fragment:
  - netaccess.nac.connection
  - netaccess.nac.attributes
attributes:
  check_mode:
    description: Sends no write; reports C(changed) and the devices that would be created.
    support: full
  diff_mode:
    description: Shows each device that is (or would be) created, as it is sent or returned.
    support: full
"""

EXAMPLES = r"""
- name: A camera with its MAC and IP address (rule 3)
  netaccess.nac.nac_device:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    hostname: cam-lobby-01
    group: Cameras
    profile: Camera
    macs: ["00-1A-2B-3C-4D-5E"]   # sent as 00:1a:2b:3c:4d:5e
    ips: ["10.20.0.15"]
  register: cam

- name: Show the device's id
  ansible.builtin.debug:
    msg: "cam-lobby-01 has id {{ cam.device.id }}"

- name: A printer without MAC; the service allocates its IP address (rule 1)
  netaccess.nac.nac_device:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    hostname: printer-2nd-floor
    group: Printers
    profile: Printer

- name: Many devices in one task, connection from module_defaults
  module_defaults:
    group/netaccess.nac.nac:
      api_url: https://nac.example.com
      username: svc-ansible
      password: "{{ vault_nac_password }}"
      tenant: "{{ vault_nac_tenant }}"
  block:
    - name: Ensure every workstation exists, 16 creations at a time
      netaccess.nac.nac_device:
        devices: "{{ workstations }}"   # list of dicts: hostname, group, profile, macs, ips
        concurrency: 16
      register: onboarded

    - name: Report what was done
      ansible.builtin.debug:
        msg: "{{ onboarded.created }} created, {{ onboarded.existing }} already there"

- name: Preview the creations without sending any (run with --check --diff)
  netaccess.nac.nac_device:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    devices:
      - hostname: intercom-gate
        group: Cameras
        profile: Intercom
        ips: ["10.20.0.40", "10.20.0.41"]   # rule 2: these IPs, no MAC
  check_mode: true
  diff: true
  register: preview
"""

RETURN = r"""
device:
  description:
    - Single form. The device as the service lists it when it exists; when it was created, the
      body sent merged with the service's reply (or the listed record when the reply had no id);
      in check mode, the body that would be sent.
    - Also returned when the task fails after the service answered the creation with an id that the device
      list did not confirm (not listed within the settle window, or listed under another name).
  returned: success, single form; a failure after a creation answered with an id
  type: dict
  sample:
    id: 17
    hostname: cam-lobby-01
    group: Cameras
    profile: Camera
    macs: ["00:1a:2b:3c:4d:5e"]
    ips: ["10.20.0.15"]
devices:
  description:
    - Bulk form. One entry per requested item, in the order given.
  returned: bulk form, also when the task fails
  type: list
  elements: dict
  contains:
    id:
      description:
        - Id of the device; null in check mode for a device that would be created, or when it failed, except
          a failed item created with an id that the device list did not confirm (that id).
      type: int
    hostname:
      description: The hostname as requested.
      type: str
    changed:
      description:
        - Whether the device was (or in check mode, would be) created.
        - Also true for a failed item whose creation was answered as a success while the device list shows
          several devices of that name (one of them is this task's), and for one whose creation was answered
          with an id that the device list did not confirm.
      type: bool
    error:
      description: Why the item failed; only for a failed item.
      type: str
    failure:
      description: The failed request (method, path, HTTP status, the server's reason), when a request failed.
      type: dict
    warnings:
      description: For example how an existing device differs from the request.
      type: list
      elements: str
  sample:
    - id: 17
      hostname: ws-0001
      changed: true
    - id: 3
      hostname: ws-0002
      changed: false
    - id: null
      hostname: ws-0003
      changed: false
      error: >-
        The NAC API refused POST /api/device with HTTP 400. The server said: Validation failed - profile:
        unknown profile Laptop
created:
  description: Bulk form. How many devices were (in check mode, would be) created.
  returned: bulk form
  type: int
  sample: 998
existing:
  description: Bulk form. How many devices existed already.
  returned: bulk form
  type: int
  sample: 1
failures:
  description: Bulk form. How many items failed (each has an RV(devices[].error)).
  returned: bulk form
  type: int
  sample: 1
"""

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.controller_alive import controller_watch
from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule, TaskFailed
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import check_concurrency, settle_seconds
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import is_one_of
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_input import text_devices
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.ensure_devices import (
    EXACT,
    GUARD,
    InvalidRequest,
    device_specs,
    ensure_devices,
    failure_message,
    item_problems,
    summary,
    warnings_of,
)

DEVICE_OPTIONS = dict(
    hostname=dict(type="raw"),  # checked by device_spec: type str would turn a list into the text "['a', 'b']"
    group=dict(type="str"),
    profile=dict(type="str"),
    macs=dict(type="list", elements="str"),
    ips=dict(type="list", elements="str"),
)


def read_devices_text(params):
    """Read ``devices`` given as text (an AWX survey answer, YAML or JSON) as the list it spells; raise ValueError
    naming the option when the text spells no list."""
    if isinstance(params.get("devices"), (str, bytes)):
        try:
            params["devices"] = text_devices(params["devices"], "devices")
        except InvalidRequest as error:
            raise ValueError(str(error)) from None


def ensure(nac):
    params = nac.params
    concurrency = check_concurrency(params["concurrency"])
    settle_timeout = settle_seconds(params["settle_timeout"], params["timeout"])
    bulk = params["devices"] is not None
    try:
        specs = device_specs(params["devices"] if bulk else [params], name="devices" if bulk else None)
        # Held compactly: every device's id and hostname, and whole only the records named (loosely) like a spec.
        keep_whole = is_one_of([spec["hostname"] for spec in specs], loosely=True)
        outcomes = ensure_devices(
            specs,
            lambda: nac.client.list_devices(compact=True, keep_whole=keep_whole),
            nac.client.create_device,
            concurrency,
            nac.check_mode,
            stored_names=params["stored_names"],
            fail_on_drift=params["fail_on_drift"],
            settle_timeout=settle_timeout,
            max_resends=nac.client.max_retries,
            should_stop=controller_watch(),
            warn=nac.warn,
            progress=nac.progress(),
        )
    except InvalidRequest as error:
        raise TaskFailed(str(error)) from None
    for outcome in outcomes:
        if outcome.changed:
            nac.change("device %s" % outcome.hostname, None, outcome.record)
    for warning in warnings_of(outcomes):
        nac.warn(warning)
    if bulk:
        result = dict(devices=[outcome.entry() for outcome in outcomes], **summary(outcomes))
        if result["failures"]:
            raise TaskFailed(failure_message(outcomes), **result)
        return result
    outcome = outcomes[0]
    if outcome.error:
        extra = dict(failure=outcome.failure) if outcome.failure else {}
        if outcome.changed:  # created, but not confirmed by the list: the device its reply named
            extra["device"] = outcome.record
        raise TaskFailed(outcome.error, **extra)
    return dict(device=outcome.record)


def main():
    NacModule(
        argument_spec=dict(
            devices=dict(
                type="list", elements="dict", options=dict(DEVICE_OPTIONS, hostname=dict(type="raw", required=True))
            ),
            state=dict(type="str", default="present", choices=["present"]),
            concurrency=dict(type="int", default=8),
            settle_timeout=dict(type="float"),
            stored_names=dict(type="str", default=GUARD, choices=[GUARD, EXACT]),
            fail_on_drift=dict(type="bool", default=False),
            **DEVICE_OPTIONS,
        ),
        mutually_exclusive=[("devices", key) for key in DEVICE_OPTIONS],
        required_one_of=[("hostname", "devices")],
        argument_hint=lambda params: item_problems(params.get("devices"), list(DEVICE_OPTIONS)),
        prepare=read_devices_text,
        pool_size=lambda params: max(params["concurrency"], 8),
    ).run(ensure)


if __name__ == "__main__":
    main()
