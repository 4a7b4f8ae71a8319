#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# house: long because DOCUMENTATION, EXAMPLES and RETURN are 340 lines; the code below them is about 55 lines

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nac_dot1x_status
short_description: Query, and optionally wait for, the 802.1x status of devices
version_added: 0.1.0
description:
  - Queries the 802.1x authentication status of one device, a list of devices, or every device of
    the NAC service, by firing the intent C(dot1x_status) ("Check 802.1x") once per device.
  - The devices are queried in parallel (O(concurrency) requests at a time over one pool of
    keep-alive connections), so a whole network takes seconds, not one round trip per device in a row.
  - With O(wait_for), polls each device until it has that status, for example until freshly
    onboarded devices are C(AUTHENTICATED).
  - Never changes anything on the NAC. With O(dest) it writes a file, and is C(changed) when that file's content
    changed (see O(dest)).
  - A long query or wait shows a progress line on the controller every 10 s or so once it has run 5 s (done,
    failed, refusals waited out, what is left), see
    R(Progress of long tasks,ansible_collections.netaccess.nac.docsite.progress); V(NAC_PROGRESS=false) silences it.
author:
  - netaccess.nac maintainers (@netaccess)
options:
  device_id:
    description:
      - Query the devices with these ids.
      - Exactly one of O(device_id), O(hostname) and O(all_devices=true) chooses the devices.
      - An id that is not in the device list is reported in RV(results) with C(error), and the task fails
        after the other devices were queried.
    type: list
    elements: int
  hostname:
    description:
      - Query the devices with these hostnames, looked up in one device list, compared as the notes say.
      - A hostname that several devices share selects all of them, with a warning naming their ids.
      - A listed device whose name only looks like a requested one (a lookalike, see the notes) is never queried
        for it; the requested name is reported as not in the device list unless a device of that very name is
        listed.
      - A hostname that is not in the device list is reported in RV(results) with C(error), and the task
        fails after the other devices were queried.
      - An empty list (of hostnames or of ids) chooses no device; the task then succeeds with empty RV(results).
        An empty hostname in the list is refused.
      - Each item is one name, checked as the notes say.
  all_devices:
    description:
      - Query every device of the service (the device list, then one status query per device).
      - V(false) counts as not given.
    type: bool
    default: false
  concurrency:
    description:
      - How many status queries are in flight at once, from 1 to 256.
      - V(1) queries one device after the other, as the vendor's batch procedure does.
    type: int
    default: 8
  wait_for:
    description:
      - A status to wait for, for example V(AUTHENTICATED); compared case-insensitively.
      - Each device that does not have it yet is queried again every O(wait_interval) seconds until it has
        it or O(wait_timeout) has passed; devices that have it are not queried again.
      - A device whose query fails while waiting is queried again (the error may be transient); if it never
        reaches the status its last error is reported.
      - When some devices did not reach the status in time, the task fails with a message naming them and
        their last status; RV(results) and RV(summary) are returned all the same.
      - Without O(wait_for), each device is queried once.
    type: str
  wait_timeout:
    description:
      - How many seconds to wait for O(wait_for) in all, from 0 to 604800 (a week). V(0) queries once and fails
        when a device does not have the status.
      - For long waits over many devices, run the task with C(async) and C(poll) (see the examples).
    type: int
    default: 300
  wait_interval:
    description:
      - Seconds between the starts of two queries of the same device while waiting; greater than 0 and at most
        86400.
    type: float
    default: 5
  check_access:
    description:
      - List the account's intents first and fail, before any status query, when the intent C(dot1x_status)
        ("Check 802.1x" / "802.1x status") is not available to the account.
      - With V(false) that check is skipped; an account without access then fails on the first refused
        query (HTTP 403), and the remaining queries are not sent.
    type: bool
    default: true
  dest:
    description:
      - Write the results to this file instead of returning them (RV(results) is then empty), so that the status of
        a whole large network is never held in the task's result nor handed to Ansible; RV(summary),
        RV(failed_devices) and RV(late_devices) say what the file holds.
      - Each result is written to a temporary file beside O(dest) (mode 0600) as soon as it is answered, in the
        order of RV(results), and not held. With O(wait_for), the results of the devices that do not have that
        status yet are held (and only those), and their lines are written again once at the end.
      - The file takes the place of O(dest) when every device was queried, also when the task then fails because
        some could not be queried or did not reach O(wait_for); when the task fails before (the device list, the
        intent check, options), O(dest) is left as it was.
      - O(dest) is put in place as C(ansible.builtin.copy) puts a file (mode 0600), replaced only when its
        content differs, and the task is C(changed) only then (or when an identical file had another mode).
        In check mode nothing is written where O(dest) is, and C(changed) says whether a run would change it.
      - A O(dest) that is a symbolic link is refused (give the path of the file itself), and so is a directory.
      - The filter P(netaccess.nac.html_report#filter) makes the HTML report from this file.
    type: path
  format:
    description:
      - The format of O(dest). V(jsonl) is JSON Lines, each entry of RV(results) as an object on a line of its own.
        V(csv) has a header line and the columns id, hostname, status, auth_method, username, message and error;
        its cells are written as the filter P(netaccess.nac.csv_row#filter) writes them (formulas neutralised, no
        raw control character).
    type: str
    choices: [jsonl, csv]
    default: jsonl
notes:
  - The task fails, with RV(results) and RV(summary) still returned, when any device could not be queried
    (unknown id or hostname, or an error after the retries of O(max_retries)), or when O(wait_for) was
    not reached by every device within O(wait_timeout). Every other device is queried first, so nothing is
    silently dropped.
  - Which failures are retried (O(max_retries)), and when a C(Server error) (HTTP 500) is taken for refused
    credentials, is in R(Retries and outcomes,ansible_collections.netaccess.nac.docsite.api_retries) of the API
    guide. Once the device list was read, RV(results) and RV(summary) are always returned; a device whose query
    still fails gets its own RV(results[].error) and every other device keeps its answer.
  - Credentials refused or no access to the intent (HTTP 401, 403, or the C(Server error) above) are the same
    for every device, so no further device is queried. Before the device list was read, the task fails with
    that message alone; during the queries, it fails with that message and RV(stopped), and still returns
    RV(results) (the devices answered before keep their answer, the others have an RV(results[].error)) and RV(summary).
  - A failure message names up to 100 devices of each kind and then says how many more there are; all are
    in RV(results).
seealso:
  - module: netaccess.nac.nac_intent_info
  - module: netaccess.nac.nac_device_info
extends_documentation_fragment:
  - netaccess.nac.connection
  - netaccess.nac.hostnames
  - netaccess.nac.attributes
  - netaccess.nac.attributes.export
"""

EXAMPLES = r"""
- name: Query one device by id
  netaccess.nac.nac_dot1x_status:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    device_id: 17

- name: Every device of the network, connection from module_defaults
  module_defaults:
    group/netaccess.nac.nac:
      api_url: https://nac.example.com
      username: svc-ansible
      password: "{{ vault_nac_password }}"
      tenant: "{{ vault_nac_tenant }}"
  block:
    - name: Query the 802.1x status of every device, 32 at a time
      netaccess.nac.nac_dot1x_status:
        all_devices: true
        concurrency: 32
      register: nac_status

    - name: Show the number of devices per status
      ansible.builtin.debug:
        var: nac_status.summary

    - name: List the devices that are not authenticated
      ansible.builtin.debug:
        msg: >-
          {{ nac_status.results | rejectattr('status', 'equalto', 'AUTHENTICATED')
             | map(attribute='hostname') | list }}

- name: Wait up to 10 minutes until two new cameras are authenticated
  netaccess.nac.nac_dot1x_status:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    hostname:
      - cam-lobby-01
      - cam-lobby-02
    wait_for: AUTHENTICATED
    wait_timeout: 600
    wait_interval: 10

- name: Wait for a large batch in the background, checking on the job every 15 seconds
  netaccess.nac.nac_dot1x_status:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    all_devices: true
    concurrency: 32
    wait_for: AUTHENTICATED
    wait_timeout: 1800
    wait_interval: 30
  async: 2000
  poll: 15
  register: nac_batch

- name: Write the status of every device of a large network to a CSV file, and keep only the summary
  netaccess.nac.nac_dot1x_status:
    all_devices: true
    concurrency: 64
    dest: /var/tmp/nac/dot1x.csv
    format: csv
  register: nac_network

- name: Show the number of devices per status, and the first devices that could not be queried
  ansible.builtin.debug:
    msg: "{{ nac_network.summary }}: {{ nac_network.failed_devices | map(attribute='hostname') | list }}"

- name: Keep going when some devices did not authenticate, and list them
  netaccess.nac.nac_dot1x_status:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
    hostname: "{{ new_devices | map(attribute='hostname') | list }}"
    wait_for: AUTHENTICATED
    wait_timeout: 120
  register: onboarded
  failed_when: onboarded.results is not defined

- name: Show the laggards
  ansible.builtin.debug:
    msg: "{{ onboarded.results | rejectattr('status', 'equalto', 'AUTHENTICATED') | list }}"
"""

RETURN = r"""
results:
  description:
    - One entry per device queried, in the order asked for (the device list's order with O(all_devices)).
      A device asked for twice is queried and listed once.
    - Devices that the device list shows with the same id (the API promises unique ids; a warning names them)
      each keep their own entry. The intent targets an id, so it is fired once for that id, and its answer is
      in each of their entries.
    - Also returned when the task fails because of unknown devices, failed queries or a timeout of O(wait_for).
  returned: success and when the task fails after the devices were queried
  type: list
  elements: dict
  contains:
    id:
      description: Id of the device; null for a hostname that is not in the device list.
      type: int
      sample: 17
    hostname:
      description:
        - Hostname of the device as the service spells it; the hostname as given when it is not in the device
          list; null for an id that is not in the device list.
      type: str
      sample: cam-lobby-01
    status:
      description:
        - The 802.1x status as the service spells it, for example V(AUTHENTICATED).
        - V(UNKNOWN) when the service's reply has no status.
        - V(ERROR) when the device could not be queried; C(error) then says why.
      type: str
      sample: AUTHENTICATED
    auth_method:
      description: Authentication method the service reports (its C(authMethod)), for example V(EAP-TLS).
      type: str
      sample: EAP-TLS
    username:
      description: Name of the authenticated user the service reports.
      type: str
      sample: cam-lobby-01
    message:
      description: Additional text of the service, null when there is none.
      type: str
      sample: Certificate rejected
    error:
      description:
        - Why this device could not be queried (for example not in the device list, a reply that is not as
          the API documents it, or the last error after the retries).
      type: str
      returned: when the device could not be queried
      sample: not in the device list (GET /api/device)
  sample:
    - id: 17
      hostname: cam-lobby-01
      status: AUTHENTICATED
      auth_method: EAP-TLS
      username: cam-lobby-01
      message: null
    - id: 18
      hostname: cam-lobby-02
      status: CONNECTING
      auth_method: null
      username: null
      message: Authentication in progress
stopped:
  description:
    - True when refused credentials stopped the queries part way (see the notes); RV(results) then names the
      devices that were not queried.
  returned: when the credentials were refused after the device list was read
  type: bool
  sample: true
refusals_waited_out:
  description:
    - How many requests of this task the service refused for its rate limit (HTTP 429, or 503 with Retry-After)
      and the task waited out (they cost no retry); see "A rate limit" in the API guide. V(0) when none were.
  returned: success and when the task fails after the devices were queried
  type: int
  sample: 0
dest:
  description: The file the results were written to (O(dest)).
  returned: when O(dest) is given and every device was queried
  type: str
  sample: /var/tmp/nac/dot1x.csv
written:
  description: How many results were written to O(dest), one a device (as many as RV(results) would have).
  returned: when O(dest) is given and every device was queried
  type: int
  sample: 100000
failed_devices:
  description:
    - With O(dest), the first 100 devices that could not be queried, each as its entry of RV(results) (with
      C(error)); RV(summary) counts them all under V(ERROR), and O(dest) has them all.
  returned: when O(dest) is given and every device was queried
  type: list
  elements: dict
  sample:
    - id: 19
      hostname: cam-lobby-03
      status: ERROR
      auth_method: null
      username: null
      message: null
      error: not in the device list (GET /api/device)
late_devices:
  description:
    - With O(dest) and O(wait_for), the first 100 devices that did not reach O(wait_for) in time, each as its entry
      of RV(results); O(dest) has them all.
  returned: when O(dest) is given and every device was queried
  type: list
  elements: dict
  sample: []
summary:
  description:
    - How many RV(results) have each status, keys sorted; devices that could not be queried count under V(ERROR).
      Its values add up to the number of RV(results).
  returned: success and when the task fails after the devices were queried
  type: dict
  sample:
    AUTHENTICATED: 980
    UNAUTHENTICATED: 18
    UNKNOWN: 2
"""

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule, TaskFailed
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import BatchStopped, dot1x_status

OPTIONS = (
    "device_id",
    "hostname",
    "all_devices",
    "concurrency",
    "wait_for",
    "wait_timeout",
    "wait_interval",
    "check_access",
    "dest",
    "format",
)


def query_status(nac):
    options = dict((name, nac.params[name]) for name in OPTIONS)
    try:
        report = dot1x_status(nac.client, progress=nac.progress(), check_mode=nac.check_mode, **options)
    except BatchStopped as stopped:  # fails the task with its result (NacModule.run), once its warnings are shown
        for warning in stopped.report.warnings:
            nac.warn(warning)
        raise
    for warning in report.warnings:
        nac.warn(warning)
    result = dict(results=report.results, summary=report.summary, refusals_waited_out=report.refusals)
    result.update(report.export or {})
    if report.failure:
        raise TaskFailed(report.failure, **result)
    return result


def main():
    NacModule(
        argument_spec=dict(
            device_id=dict(type="list", elements="int"),
            hostname=dict(type="list", elements="raw"),  # each checked by check_hostnames
            all_devices=dict(type="bool", default=False),
            concurrency=dict(type="int", default=8),
            wait_for=dict(type="str"),
            wait_timeout=dict(type="int", default=300),
            wait_interval=dict(type="float", default=5.0),
            check_access=dict(type="bool", default=True),
            dest=dict(type="path"),
            format=dict(type="str", choices=["jsonl", "csv"], default="jsonl"),
        ),
        read_only=True,
        pool_size=lambda params: max(params["concurrency"], 8),
    ).run(query_status)


if __name__ == "__main__":
    main()
