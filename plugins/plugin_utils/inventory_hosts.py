# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Name the inventory's hosts and give them their variables, so that the inventory plugin only adapts Ansible.

Every device of the NAC's list is a host: its hostname, or a name made unique when the hostname is shared, empty
or holds a control character; its ``nac_*`` variables come from its record and its status entry."""

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    hostname_key,
    index_by_hostname,
    repeated_ids,
    repeated_ids_warning,
)


def has_control(text):
    """Whether ``text`` holds a control character (server_text.CONTROL: a terminal or a log would act on it)."""
    return CONTROL.search(text) is not None


ALL_GROUP = "nac_devices"
STATUS_GROUP_PREFIX = "nac_dot1x_"
STATUS_VARS = (
    ("nac_dot1x_status", "status"),
    ("nac_auth_method", "auth_method"),
    ("nac_username", "username"),
    ("nac_dot1x_message", "message"),
    ("nac_dot1x_error_message", "error"),
)


def host_names(records):
    """([host name of each record, in the records' order], warnings): the hostname, or ``<hostname>_<id>`` for
    each device whose hostname another device has too (the same name, hostnames.hostname_key, as hostnames are
    matched everywhere in this collection); ``nac_device_<id>`` for a device whose hostname is empty or holds a
    control character (never a host name: a terminal or a log would act on it; the name stays in nac_hostname).
    Records that share an id (a faulty list) are hosts of their own, and a warning names them."""
    by_name = index_by_hostname(records)
    taken = set(key for key, matches in by_name.items() if len(matches) == 1)
    named, warnings = {}, []  # {id(record): host name}
    for matches in by_name.values():
        hostname = matches[0]["hostname"]
        usable = hostname.strip() and not has_control(hostname)
        if len(matches) == 1 and usable:
            named[id(matches[0])] = hostname
            continue
        for record in matches:
            name = "%s_%s" % (record["hostname"].strip() if usable else "nac_device", record["id"])
            while hostname_key(name) in taken:  # another device is named like that already
                name = "%s_%s" % (name, record["id"])
            taken.add(hostname_key(name))
            named[id(record)] = name
        hosts = ", ".join(named[id(record)] for record in matches)
        ids = ", ".join(str(record["id"]) for record in matches)
        if hostname.strip() and not usable:
            plural = "s" if len(matches) > 1 else ""
            warnings.append(
                "device id%s %s: the hostname '%s' holds control characters, so it is no host name: host%s named %s "
                "(the hostname as the NAC shows it is in nac_hostname)" % (plural, ids, shown(hostname), plural, hosts)
            )
        elif len(matches) == 1:
            warnings.append("device id %s has an empty hostname: its host is named %s" % (ids, hosts))
        else:
            warnings.append(
                "hostname %r is shared by %d devices (ids %s): their hosts are named %s"
                % (hostname, len(matches), ids, hosts)
            )
    repeated = repeated_ids_warning(repeated_ids(records))
    if repeated:
        warnings.append(repeated)
    return [named[id(record)] for record in records], warnings


def host_vars(record, entry=None):
    """The ``nac_*`` variables of one device: its record, and its status entry (dot1x_results.shape) if any. The
    record is ``nac_record`` itself (not a copy): the other variables share its values."""
    hostvars = dict(nac_id=record["id"], nac_hostname=record["hostname"], nac_record=record)
    for key in ("group", "profile"):
        value = record.get(key)
        value = value.get("name") if isinstance(value, dict) else value
        if isinstance(value, str):
            hostvars["nac_" + key] = value
    for key in ("macs", "ips"):
        if isinstance(record.get(key), list):
            hostvars["nac_" + key] = record[key]
    if entry is not None:
        hostvars.update((name, entry[key]) for name, key in STATUS_VARS if key in entry)
    return hostvars
