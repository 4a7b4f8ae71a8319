# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nac
short_description: Devices of the NAC as Ansible hosts, grouped by their 802.1x status
version_added: 0.1.0
description:
  - Makes every device of the NAC service an Ansible host, from one device list (C(GET /api/device)).
  - With O(dot1x_status=true), also queries the 802.1x status of every device (the intent C(dot1x_status),
    O(concurrency) queries at a time over one pool of keep-alive connections) and groups the hosts by it,
    for example C(nac_dot1x_unauthenticated).
  - Hosts are named by the device hostname. Devices that share a hostname (the same name, that is
    canonically equivalent Unicode, equal NFC forms, and equal when ASCII letters are compared without case,
    RFC 4343, as M(netaccess.nac.nac_device) compares them) are each named C(<hostname>_<id>), with a
    warning naming them. Names that only look alike (C(strasse-01) and C(straße-01)) are different hosts.
  - A device whose hostname is empty, or holds a control character (C0, DEL, C1, U+2028, U+2029, and the
    invisible format characters such as bidirectional overrides; an escape sequence or a line break that a
    terminal or a log would act on), is named C(nac_device_<id>), with a
    warning naming its id (the control characters shown escaped); C(nac_hostname) holds the hostname as the
    NAC shows it.
  - "No server string is ever run as a template, not even one that O(compose) decodes (C(nac_group | urldecode)).
    With ansible-core before 2.19 every server string is marked unsafe, and C(ansible-inventory --list) (what
    an AWX inventory update stores) writes each as C({\"__ansible_unsafe\": ...}); from 2.19 on only those
    with a brace. See the security page of the collection's documentation."
  - Ids that the device list shows for several devices (the API promises unique ids) are named in a warning;
    each such device is a host of its own. With O(dot1x_status=true) the intent is fired once per id, and
    each of those hosts gets its answer.
  - "Host variables: C(nac_id), C(nac_hostname), C(nac_group) and C(nac_profile) (when the record shows
    them, as a string or an object with a C(name)), C(nac_macs) and C(nac_ips) (when the record shows
    them as lists), C(nac_record) (the record as listed). With O(dot1x_status=true) also
    C(nac_dot1x_status), C(nac_auth_method), C(nac_username), C(nac_dot1x_message), and
    C(nac_dot1x_error_message) for a device that could not be queried (its status is then V(ERROR))."
  - "Groups: C(nac_devices) (every device); with O(dot1x_status=true), C(nac_dot1x_<status in lower case>)
    (for example C(nac_dot1x_authenticated), C(nac_dot1x_unknown) for a reply without a status) and
    C(nac_dot1x_error) for the devices that could not be queried. Group names are sanitised the way
    O(keyed_groups) names are."
  - The inventory source is a YAML file whose name ends in C(nac.yml) or C(nac.yaml).
author:
  - netaccess.nac maintainers (@netaccess)
extends_documentation_fragment:
  - netaccess.nac.connection
  - netaccess.nac.connection.plugins
  - ansible.builtin.constructed
  - ansible.builtin.inventory_cache
options:
  plugin:
    description: The name of this plugin; the inventory source is for this plugin only when it is set to it.
    type: str
    required: true
    choices:
      - netaccess.nac.nac
  dot1x_status:
    description:
      - Query the 802.1x status of every device, and group the hosts by it.
      - Needs an account with access to the intent C(dot1x_status) ("Check 802.1x"); the intents are listed
        first, and the inventory fails before any query when it is not among them.
      - A device that could not be queried is in the group C(nac_dot1x_error) with its error in
        C(nac_dot1x_error_message); the other devices are unaffected.
      - When V(false), no status query is sent at all.
    type: bool
    default: false
  concurrency:
    description:
      - Status queries in flight at once when O(dot1x_status=true), from 1 to 256.
    type: int
    default: 8
  progress:
    description:
      - "While the statuses of O(dot1x_status=true) are queried, show on standard error, once the queries have run
        5 s and then at most every 10 s, one line such as
        C(netaccess.nac.nac inventory: 1,204 of 2,005 queried, 3 failed, 0 refusals waited out, about 40 s left).
        Never in the output of C(ansible-inventory --list)."
      - V(false) shows none.
    type: bool
    default: true
    env:
      - name: NAC_PROGRESS
  record_var:
    description:
      - Also set the host variable C(nac_record), the whole record as listed (every field the NAC shows, the
        ones that have no C(nac_*) variable of their own too), on every host.
      - V(false) leaves it out; the other C(nac_*) variables are set either way, and O(compose), O(groups) and
        O(keyed_groups) can still read C(nac_record). Ansible copies every list and dict of every variable of
        every host and the record is the largest; with it an inventory takes about 1.6 times the memory and 1.2
        times the time (measured at 300,000 devices).
      - The default was V(true) in version 0.1.0.
    type: bool
    default: false
notes:
  - Credentials are best given by the environment variables (as the AWX credential type of this collection
    injects them), never written into the inventory source. No credential appears in the inventory, its
    cache, its errors or its log.
  - With O(cache=true), a run within O(cache_timeout) seconds of the previous one sends no request at all.
    The cache holds the device list and statuses (no credential), per inventory source, API address, tenant
    and O(dot1x_status); O(compose), O(groups) and O(keyed_groups) are applied afresh on every run.
  - "A cache file (of a file cache plugin such as C(ansible.builtin.jsonfile)) is used only when it is the user's
    own: a regular file (not a symbolic link) owned by the user that runs Ansible, writable by nobody else, in a
    directory that no other user can write into (or a sticky one such as C(/tmp)). Otherwise the plugin warns,
    names what is wrong and reads the devices from the NAC. The plugin makes the cache directory private (0700)
    when it is the user's own, never through a symbolic link, so that the files Ansible's cache plugin writes in
    it (0644) are read by nobody else: give the cache a directory of your own (O(cache_connection)), as the
    example does."
  - When the NAC cannot be queried, Ansible reports the source as unparsed and carries on without its hosts,
    unless the setting C(inventory_any_unparsed_is_failed) (E(ANSIBLE_INVENTORY_ANY_UNPARSED_IS_FAILED)) is
    true; AWX inventory updates fail on it.
seealso:
  - module: netaccess.nac.nac_dot1x_status
  - module: netaccess.nac.nac_device_info
"""

EXAMPLES = r"""
# dot1x.nac.yml (the name must end in nac.yml or nac.yaml). The connection comes from the environment:
# NAC_API_URL and NAC_API_KEY, or NAC_USERNAME, NAC_PASSWORD and NAC_TENANT. The plugin line alone lists
# every device (group nac_devices); each block below it is optional.
plugin: netaccess.nac.nac

# Group the hosts by their 802.1x status (nac_dot1x_authenticated, ...), 32 queries at a time
dot1x_status: true
concurrency: 32

# Cache the device list and the statuses for five minutes
cache: true
cache_plugin: ansible.builtin.jsonfile
# A directory of your own (the plugin keeps it 0700): a cache file that another user could write is never used
cache_connection: ~/.cache/netaccess.nac/inventory
cache_timeout: 300

# Groups and variables of your own from the device records
keyed_groups:
  - key: nac_group
    prefix: nac_group
  - key: nac_profile
    prefix: nac_profile
groups:
  nac_needs_attention: nac_dot1x_status not in ['AUTHENTICATED']
compose:
  ansible_host: nac_ips[0] if nac_ips else omit
"""

import hashlib
import json
import os
import time

from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, mask, strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    INSECURE_TLS,
    SECRET_OPTIONS,
    boolean,
    check_concurrency,
    connection_values,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import query_all, require_access, resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress
from ansible_collections.netaccess.nac.plugins.plugin_utils.inventory_files import (
    PLUGIN,
    distrusted_cache,
    names_this_plugin,
    rename_hint,
)
from ansible_collections.netaccess.nac.plugins.plugin_utils.inventory_hosts import (
    ALL_GROUP,
    STATUS_GROUP_PREFIX,
    host_names,
    host_vars,
)
from ansible_collections.netaccess.nac.plugins.plugin_utils.inventory_values import Shared, inert, inert_name


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """Adapt the NAC's device list to Ansible's inventory, and nothing more: the client, the options and the status
    query are module_utils' own (client.py, options.py, dot1x_query.py), the hosts, their values and the cache's
    files plugin_utils' (inventory_hosts.py, inventory_values.py, inventory_files.py)."""

    NAME = PLUGIN

    def verify_file(self, path):
        if not super(InventoryModule, self).verify_file(path):
            return False
        if path.endswith(("nac.yml", "nac.yaml")):
            return True
        if names_this_plugin(path):  # Ansible would only say that no inventory was parsed
            self.display.warning(
                "%s names the plugin %s, but an inventory source of it must be a file whose name ends with nac.yml "
                "or nac.yaml: rename it (for example to %s)" % (shown(path), PLUGIN, shown(rename_hint(path)))
            )
        return False

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._nac_source = path
        self.check_booleans(self._read_config_data(path))
        key = self.cache_key(path)
        use_cache = self.get_option("cache") and cache
        data = None
        if use_cache:
            distrusted = distrusted_cache(self._cache, key)
            if distrusted:
                self.display.warning(
                    "netaccess.nac.nac inventory: %s: not used, the devices are read from the NAC" % distrusted
                )
            try:
                data = None if distrusted else self._cache[key]
            except KeyError:
                pass
            if not isinstance(data, dict) or not isinstance(data.get("devices"), list):
                data = None  # not cached, or by something else: fetched afresh
        if data is None:
            try:
                data = self.fetch()
            except NacError as error:
                secrets = hidden_forms([self.get_option(name) for name in SECRET_OPTIONS], self.get_option("api_url"))
                raise AnsibleParserError("netaccess.nac.nac inventory: %s" % mask(error.message, secrets)) from None
            if self.get_option("cache"):
                self._cache[key] = data
        self.populate(data["devices"], data.get("dot1x"))

    def check_booleans(self, config, environ=None):
        """Fail unless every boolean option (ours and Ansible's) is one of Ansible's boolean words: read as given,
        in the source (``config``) or the environment, since Ansible's configuration reads any unknown word
        (``NAC_VALIDATE_CERTS=ture``) as false, which would turn TLS verification off by mistake."""
        environ = os.environ if environ is None else environ
        definitions = C.config.get_configuration_definitions("inventory", self._load_name) or {}
        for name, definition in sorted(definitions.items()):
            if definition.get("type") not in ("bool", "boolean"):
                continue
            where, value = name, config.get(name) if isinstance(config, dict) else None
            if value is None:
                for variable in [entry.get("name") for entry in definition.get("env") or ()]:
                    if variable in environ:  # as Ansible reads it: the last one set, an empty one too
                        where, value = "%s (from %s)" % (name, variable), environ[variable]
            if value is not None:
                try:
                    boolean(value, where)
                except NacConfigError as error:
                    raise AnsibleParserError("netaccess.nac.nac inventory: %s" % error.message) from None

    def cache_key(self, path):
        """The standard key of the source, narrowed by what decides the data: the API address, the tenant
        and whether statuses were queried (no credential, in any form)."""
        settings = json.dumps(
            [
                strip_userinfo(str(self.get_option("api_url"))),
                self.get_option("tenant"),
                self.get_option("dot1x_status"),
            ]
        )
        return "%s_%s" % (self.get_cache_key(path), hashlib.sha256(settings.encode("utf-8")).hexdigest()[:12])

    def fetch(self):
        """{devices: the device list, dot1x: one status entry per device (dot1x_results.shape) or None}, every form
        of the credentials masked in every value (masking.mask)."""
        concurrency = check_concurrency(self.get_option("concurrency"))
        client = NacClient(read_only=True, pool_size=max(concurrency, 8), **connection_values(self.get_option))
        if not self.get_option("validate_certs"):
            self.display.warning("netaccess.nac.nac inventory: " + INSECURE_TLS)
        try:
            records = client.list_devices()
            if not self.get_option("dot1x_status"):
                return mask(dict(devices=records, dot1x=None), client.secrets)
            require_access(client)
            targets, _warnings = resolve(records, all_devices=True)
            started = time.monotonic()
            entries = query_all(client, targets, concurrency, self.progress(client))
            self.display.vvv(
                "netaccess.nac.nac inventory: 802.1x status of %d devices queried in %.2f s, %d at a time"
                % (len(entries), time.monotonic() - started, concurrency)
            )
            return mask(dict(devices=records, dot1x=entries), client.secrets)  # a NAC that echoes the credentials
        finally:
            client.close()

    def progress(self, client):
        """The progress of the status queries, shown on standard error (never in ``ansible-inventory --list``'s
        output) unless the option ``progress`` is false."""

        def emit(line):
            self.display.display(shown(line), stderr=True)

        return Progress(
            "netaccess.nac.nac inventory",
            emit if self.get_option("progress") else None,
            refusals=lambda: client.refusals,
        )

    def populate(self, records, entries=None):
        """Each record a host, in the groups and with the variables it gives (the documentation above). The options
        are read once; each string is made inert once however many records share it; ``nac_record`` is set only
        with O(record_var). Constructed options are applied only where given."""
        names, warnings = host_names(records)
        for warning in warnings:
            self.display.warning("netaccess.nac.nac inventory: " + shown(warning))
        self.inventory.add_group(ALL_GROUP)
        strict = self.get_option("strict")
        compose, groups, keyed = (self.get_option(name) for name in ("compose", "groups", "keyed_groups"))
        record_var = self.get_option("record_var")
        inventory, strings, status_groups = self.inventory, Shared(self._nac_source), {}
        constructed = bool(compose or groups or keyed)  # nac_record is made inert only where it is read
        for index, record in enumerate(records):
            name = inert_name(names[index])
            entry = entries[index] if entries is not None else None
            # The same values for the variables and for the constructed expressions: a server string is data.
            if record_var or constructed:  # made inert once: the other variables share its values
                hostvars = host_vars(inert(record, strings), None if entry is None else inert(entry, strings))
            else:  # (our variable names are left as they are)
                hostvars = host_vars(record, entry)
                del hostvars["nac_record"]
                hostvars = dict((variable, inert(value, strings)) for variable, value in hostvars.items())
            inventory.add_host(name, group=ALL_GROUP)
            if entries is not None:
                status = entries[index]["status"]
                group = status_groups.get(status)
                if group is None:
                    group = self._sanitize_group_name(STATUS_GROUP_PREFIX + status.lower())
                    group = status_groups[status] = inventory.add_group(group)
                inventory.add_host(name, group=group)
            for variable, value in hostvars.items():
                if record_var or variable != "nac_record":
                    inventory.set_variable(name, variable, value)
            if compose:
                self._set_composite_vars(compose, hostvars, name, strict=strict)
            if groups:
                self._add_host_to_composed_groups(groups, hostvars, name, strict=strict)
            if keyed:
                self._add_host_to_keyed_groups(keyed, hostvars, name, strict=strict)
