#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: nac_device_info
short_description: List devices of the NAC service
version_added: 0.1.0
description:
  - Lists the devices of the NAC service, all of them or those matching O(hostname) or O(id).
  - Never changes anything on the NAC. With O(dest) it writes a file, and is C(changed) when that file's content
    changed (see O(dest)).
author:
  - netaccess.nac maintainers (@netaccess)
options:
  hostname:
    description:
      - Only devices with one of these hostnames, compared as the notes say.
      - A listed device whose name only looks like a requested one (a lookalike, see the notes) is not returned
        for it; the requested name is in RV(missing) unless a device of that very name is listed.
      - Combined with O(id), a device matching either is returned.
      - An empty list matches no device, as in M(netaccess.nac.nac_dot1x_status); leave the option out to list
        every device.
      - Each item is one name, checked as the notes say.
  id:
    description:
      - Only devices with one of these ids.
    type: list
    elements: int
  dest:
    description:
      - Write the devices to this file instead of returning them (RV(devices) is then empty), so that the whole
        device list of a large network is never held in the task's result.
      - Each record is written to a temporary file beside O(dest) (mode 0600) as soon as it is read, and not held;
        the module holds the ids of one page (8 bytes a device) and a bit for each id up to the largest, not the
        list (1,000,000 devices, 136 MB of list, in 41 MiB).
      - The temporary file replaces O(dest) at once when the whole list has been read and checked (pages that
        shifted while they were read are read again, as ever); when the list fails, the temporary file is removed
        and O(dest) is left as it was.
      - With O(hostname) or O(id), only the matching devices are written (the list is then held compactly, as
        without O(dest)).
      - O(dest) is put in place as C(ansible.builtin.copy) puts a file (mode 0600), replaced only when its
        content differs, and the task is C(changed) only then (or when an identical file had another mode).
        In check mode nothing is written where O(dest) is (the list is written to the system's temporary
        directory, compared with O(dest) and removed), and C(changed) says whether a run would change O(dest).
      - A O(dest) that is a symbolic link is refused (give the path of the file itself), and so is a directory.
    type: path
  format:
    description:
      - The format of O(dest). V(jsonl) is JSON Lines, each record as the service lists it on a line of its
        own. V(csv) has a header line and the columns id, hostname, group, profile (an object's C(name)),
        macs and ips (the items joined by spaces); its cells are written as the filter
        P(netaccess.nac.csv_row#filter) writes them (formulas neutralised, no raw control character).
    type: str
    choices: [jsonl, csv]
    default: jsonl
extends_documentation_fragment:
  - netaccess.nac.connection
  - netaccess.nac.hostnames
  - netaccess.nac.attributes
  - netaccess.nac.attributes.export
notes:
  - Ids that the device list shows for several devices (the API promises unique ids) are named, with their
    hostnames, in a warning; every such record is returned as listed.
"""

EXAMPLES = r"""
- name: List every device
  netaccess.nac.nac_device_info:
    api_url: https://nac.example.com
    api_key: "{{ vault_nac_api_key }}"
  register: nac

- name: Look up two cameras, connection from module_defaults
  module_defaults:
    group/netaccess.nac.nac:
      api_url: https://nac.example.com
      username: svc-ansible
      password: "{{ vault_nac_password }}"
      tenant: "{{ vault_nac_tenant }}"
  netaccess.nac.nac_device_info:
    hostname:
      - cam-lobby-01
      - CAM-LOBBY-02
  register: cams

- name: Export every device to a CSV file
  netaccess.nac.nac_device_info:
    dest: /var/tmp/nac_devices.csv
    format: csv
  register: export

- name: Fail when any of them is not in the NAC
  ansible.builtin.assert:
    that: cams.missing | length == 0
    fail_msg: "Not in the NAC: {{ cams.missing | join(', ') }}"
"""

RETURN = r"""
devices:
  description:
    - The matching device records as the service lists them.
    - Every record has C(id) and C(hostname); other fields are whatever the service returns.
  returned: success
  type: list
  elements: dict
  sample:
    - id: 3
      hostname: cam-lobby-01
      group: Cameras
      profile: Camera
      macs: ["00:1a:2b:3c:4d:5e"]
      ips: ["10.20.0.10"]
missing:
  description:
    - The requested hostnames and ids that match no device, in the order they were asked for.
    - When there are any, a warning names them too (the task still succeeds; see the example above to fail on them).
  returned: success
  type: list
  elements: raw
  sample: ["cam-lobby-02", 42]
dest:
  description: The file the devices were written to (O(dest)).
  returned: success, when O(dest) is given
  type: str
  sample: /var/tmp/nac_devices.csv
written:
  description: How many devices were written to O(dest).
  returned: success, when O(dest) is given
  type: int
  sample: 1000000
"""

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.module import NacModule
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    check_hostnames,
    is_one_of,
    lookalike_text,
    lookalikes,
    repeated_ids,
    repeated_ids_warning,
    select,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_export import DeviceFile, write_records


def list_devices(nac):
    hostnames = None if nac.params["hostname"] is None else check_hostnames(nac.params["hostname"])
    ids, dest, form = nac.params["id"], nac.params["dest"], nac.params["format"]
    if dest is not None and hostnames is None and ids is None:  # written as read, never held
        with DeviceFile(dest, form, nac.check_mode) as export:
            nac.client.list_devices(into=export)
            repeated = repeated_ids_warning(export.repeated_ids())
            if repeated:
                nac.warn(repeated)
            written = export.commit()
            return dict(changed=export.changed, devices=[], missing=[], dest=dest, written=written)
    if hostnames is None and ids is None:
        records = nac.client.list_devices()
    else:  # held compactly but for the records asked for
        records = nac.client.list_devices(compact=True, keep_whole=is_one_of(hostnames or (), ids or ()))
    devices, missing = select(records, hostnames, ids)
    for name, listed in lookalikes(records, hostnames or ()).items():
        nac.warn(
            "%s: not returned for %s%s"
            % (lookalike_text(name, listed), name, ", which is not listed" if name in missing else "")
        )
    repeated = repeated_ids_warning(repeated_ids(records))
    if repeated:
        nac.warn(repeated)
    if missing:
        nac.warn(missing_warning(missing))
    if dest is not None:
        written, changed = write_records(dest, form, devices, nac.check_mode)
        return dict(changed=changed, devices=[], missing=missing, dest=dest, written=written)
    return dict(devices=devices, missing=missing)


def missing_warning(missing, limit=10):
    """The warning naming the hostnames and ids asked for that match no device (at most ``limit`` of them)."""
    named = ", ".join(str(item) for item in missing[:limit])
    if len(missing) > limit:
        named += " and %d more" % (len(missing) - limit)
    return "%d of the requested hostnames and ids match no device of the NAC: %s (the result's missing lists them)" % (
        len(missing),
        named,
    )


def main():
    NacModule(
        argument_spec=dict(
            hostname=dict(type="list", elements="raw"),  # each checked by check_hostnames
            id=dict(type="list", elements="int"),
            dest=dict(type="path"),
            format=dict(type="str", choices=["jsonl", "csv"], default="jsonl"),
        ),
        read_only=True,
    ).run(list_devices)


if __name__ == "__main__":
    main()
