# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Choose the devices whose 802.1x status is asked for (no Ansible imports), so that each is queried once.

``resolve`` turns the ids, hostnames or ``all_devices`` asked for into targets, in the order asked for, with the
warnings a reader needs (a name listed twice, a lookalike, an id shared by several records). ``HeldTargets`` holds
them in memory; ``ListedTargets`` reads every listed device from a temporary file, so that the whole network's
targets take memory that does not grow with the number of devices. ``dot1x_query`` queries them.
"""

import collections
import json
import os
import tempfile

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    by_hostname,
    hostname_key,
    lookalike_text,
    repeated_ids,
    repeated_ids_warning,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_export import DeviceFile, id_keeper

NOT_LISTED = "not in the device list (GET /api/device)"

Target = collections.namedtuple("Target", "id hostname error")


def resolve(records, device_ids=None, hostnames=None, all_devices=False):
    """The targets (``Target(id, hostname, error)``) in the order asked for, and warnings.

    One target per listed record chosen, however often it was asked for. A hostname matches every
    record of the same name (hostnames.hostname_key; several: a warning names their ids); a record
    whose name matches only by a looser rule (a lookalike) is never its target, and a warning names
    it with its id. An id matches every record the list shows with it. Ids that the list shows for
    several records are named in a warning, and each such record keeps its own target (``poll``
    fires once per id). Unknown ids and hostnames become targets with ``error`` set: they are
    reported, never fired.
    """
    warnings = [warning for warning in (repeated_ids_warning(repeated_ids(records)),) if warning]
    if all_devices:
        return [Target(r["id"], r["hostname"], None) for r in records], warnings
    chosen = _Chosen()
    if device_ids is not None:
        wanted, by_id = set(device_ids), {}
        for record in records:
            if record["id"] in wanted:
                by_id.setdefault(record["id"], []).append(record)
        for ident in device_ids:
            for record in by_id.get(ident, ()):
                chosen.add(Target(ident, record["hostname"], None), id(record))
            if ident not in by_id:
                chosen.add(Target(ident, None, NOT_LISTED), ("id", ident))
        return chosen.targets, warnings
    for name, (matches, alike) in by_hostname(records, hostnames or ()).items():
        key = hostname_key(name)
        if alike and chosen.first(("alike", key)):
            listed = "" if matches else ", which is not listed"
            warnings.append("%s: not queried as %s%s" % (lookalike_text(name, alike), shown(name), listed))
        if chosen.first(("name", key)) and len(matches) > 1:
            warnings.append(
                "hostname %s matches %d devices (ids %s): the status of each is returned"
                % (shown(name), len(matches), ", ".join(str(r["id"]) for r in matches))
            )
        if not matches:
            chosen.add(Target(None, name, NOT_LISTED), ("missing", key))
        for record in matches:
            chosen.add(Target(record["id"], record["hostname"], None), id(record))
    return chosen.targets, warnings


class _Chosen:
    """The targets chosen so far, each once (by a key: the record, or the id or name that is not listed)."""

    def __init__(self):
        self.targets, self._seen = [], set()

    def first(self, key):
        """Whether ``key`` is seen for the first time (it is seen from now on)."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def add(self, target, key):
        if self.first(key):
            self.targets.append(target)


def shared_ids(targets):
    """{index: index of the first target with the same id} for each target (not an error) whose id an earlier
    target has: the intent is fired once per id, and its answer is every such target's too."""
    first, copies = {}, {}
    for index, target in enumerate(targets):
        if target.error is None and first.setdefault(target.id, index) != index:
            copies[index] = first[target.id]
    return copies


def fired(targets, repeated):
    """The targets that are queried: not an error, and the first of those with a repeated id."""
    fired = set()
    for target in targets:
        if target.error is None and target.id not in fired:
            if target.id in repeated:
                fired.add(target.id)
            yield target


class HeldTargets:
    """A list of Targets (``resolve``'s), as ``stream_poll`` reads them: ``repeated``, the ids that several targets
    share, and ``queried``, how many are queried (one a distinct id)."""

    def __init__(self, targets, warnings=()):
        self.targets, self.warnings = targets, warnings
        counts = collections.Counter(target.id for target in targets if target.error is None)
        self.repeated = set(ident for ident, count in counts.items() if count > 1)
        self.queried = len(counts)

    def __iter__(self):
        return iter(self.targets)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


class ListedTargets(HeldTargets):
    """Every listed device as a Target, read from a temporary file (device_export.DeviceFile, an id and a hostname
    a line, in a directory of its own in the system's temporary directory) that the device list is written to as it
    is read, with every check of the list: the targets of ``all_devices`` in memory that does not grow with the
    number of devices."""

    def __init__(self, client):  # pylint: disable=super-init-not-called
        self.directory = tempfile.mkdtemp(prefix=".nac_dot1x.")  # mode 0700, this task's own
        try:
            self.export = DeviceFile(os.path.join(self.directory, "targets"), "jsonl", keep=id_keeper())
            client.list_devices(into=self.export)
            repeated = self.export.repeated_ids()
        except BaseException:
            self.__exit__()
            raise
        self.warnings = [warning for warning in (repeated_ids_warning(repeated),) if warning]
        self.repeated = set(repeated)
        self.queried = len(self.export) - sum(len(shared) - 1 for shared in repeated.values())

    def __iter__(self):
        self.export.flushed()
        with open(self.export.temporary, encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                yield Target(record["id"], record["hostname"], None)

    def __exit__(self, *exc_info):
        if getattr(self, "export", None) is not None:
            self.export.close()
        os.rmdir(self.directory)
