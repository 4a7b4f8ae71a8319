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
import stat
import time

from ansible import constants as C
from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable

try:  # ansible-core 2.19+
    from ansible.template import trust_as_template

    wrap_var = None
except ImportError:  # before 2.19: the server's strings are marked unsafe instead
    from ansible.utils.unsafe_proxy import wrap_var

    trust_as_template = None

try:  # ansible-core 2.19+: the tag that set_variable gives each value that has none (a copy of it), for each host
    from ansible._internal._datatag._tags import Origin
    from ansible.module_utils._internal._datatag import AnsibleTagHelper
except ImportError:
    Origin = AnsibleTagHelper = None

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.template_guard import (
    could_be_template,
    could_become_template,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError, NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, mask, strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    INSECURE_TLS,
    SECRET_OPTIONS,
    boolean,
    check_concurrency,
    connection_values,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import CONTROL, shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import NacClient
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import (
    hostname_key,
    index_by_hostname,
    repeated_ids,
    repeated_ids_warning,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.dot1x_query import query_all, require_access, resolve
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress

SHARED_STRINGS = 65536  # the server strings remembered at a time (Shared)


class Shared(dict):
    """The server strings made inert once, by value, for every host that holds them (InventoryModule.populate). With
    ansible-core 2.19+, each (and each integer) is tagged with the inventory source's Origin too, so that the
    inventory's set_variable keeps it as it is, one object for every variable of every host that holds it, instead
    of copying and tagging it for each (the nac_record of 30,000 hosts held 34 tagged objects a host, now about a
    third). At most SHARED_STRINGS strings are remembered at a time (most are a host's own, its name, its
    addresses): when full, it starts again, and a string many hosts share is remembered again at once. ``source``:
    the inventory source's path."""

    def __init__(self, source=None):
        super(Shared, self).__init__()
        self.tag = None
        if Origin is not None and source is not None:
            try:
                self.tag = Origin(description="<inventory plugin 'netaccess.nac.nac' with source %r>" % source).tag
            except (TypeError, ValueError):  # (an ansible-core whose Origin is made otherwise: values copied)
                pass
        self.tag = shared_tags(self.tag) if self.tag is not None else None

    def made(self, value):
        """A string made inert (and tagged), the same object every time while it is remembered."""
        made = self.get(value)
        if made is None:
            if len(self) >= SHARED_STRINGS:
                self.clear()
            made = inert(value)
            made = self[value] = self.tag(made) if self.tag is not None else made
        return made


def shared_tags(tag):
    """``tag`` (an Origin's tag method: a value in, a tagged copy out), made to give every value with the same tags
    before (none, or trusted as a template) one and the same record of its tags: ansible-core gives each tagged value
    a mapping of its own (about 110 bytes, as much as a short string; the inventory's strings and ids are over a million
    values at 300,000 devices). The mappings are never changed in place (a tag added or removed makes a new value);
    the result is checked against ``tag`` itself once for each kind of value, and ``tag`` is used as it is when
    ansible-core tags otherwise (an internal interface: a version without it copies the mapping as before)."""
    mappings = {}  # {a plain class, or (the value's class, the tags it had): (the tagged class, the shared tags)}

    def tagged(value):
        kind = value.__class__ if value.__class__ in (str, int) else (value.__class__, AnsibleTagHelper.tags(value))
        known = mappings.get(kind)
        if known is None:
            made = tag(value)
            try:
                known = made.__class__, made._ansible_tags_mapping
                again = known[0]._instance_factory(value, known[1])
                if again.__class__ is not made.__class__ or again != made:
                    known = False
                elif AnsibleTagHelper.tags(again) != AnsibleTagHelper.tags(made):
                    known = False
            except (AttributeError, TypeError):
                known = False
            mappings[kind] = known
            return made
        if known is False:
            return tag(value)
        return known[0]._instance_factory(value, known[1])

    return tagged


def inert(value, strings=None):
    """The server's data, made safe to template, recursively: no server string is ever run as a template, not
    even one that a user's ``compose`` decodes or transforms (``nac_group | urldecode``).

    2.19+: a string that could be a template is left untrusted (as every string an inventory plugin sets), any
    other string is trusted (templating it changes nothing) so that ``ansible-inventory --list --output`` (what
    an AWX inventory update stores) writes it as a plain string; a template's result, decoded or not, is never
    trusted. Before 2.19 every string is wrapped unsafe: a plain string is templated when it is used, so one
    that a filter decodes into '{{ ... }}' would run; unsafety follows a value through filters.

    ``strings``: a Shared that remembers each string made inert (and each integer, when it tags them), so that a
    value many records share (their keys, a group's name) is made inert, and held, once (InventoryModule.populate)."""
    if isinstance(value, str):
        if strings is not None:
            return strings.made(value)
        if trust_as_template is None:
            return wrap_var(value)
        return value if could_be_template(value) else trust_as_template(value)
    if isinstance(value, dict):
        return dict((inert(key, strings), inert(item, strings)) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return [inert(item, strings) for item in value]
    if value.__class__ is int and strings is not None and strings.tag is not None:
        return strings.tag(value)  # (a plain int only: not a bool, nor one tagged already; a host's id, tagged once)
    return value


def inert_name(name):
    """A host name: never templatable. Before 2.19 only a name that could be or become a template (once
    normalised or decoded: template_guard.could_become_template) is wrapped unsafe, so that ``ansible-inventory --list``
    writes every other name as a plain string in the lists of hosts."""
    if trust_as_template is None:
        return wrap_var(name) if could_become_template(name) else name
    return name if could_be_template(name) else trust_as_template(name)


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


def distrusted_cache(cache, key):
    """Why the file that holds ``key`` in a file cache (``cache``: the plugin's CachePluginAdjudicator) is not the
    user's own, or None (also when the cache keeps no file, or has none for ``key`` yet). Its directory is made
    private (0700) when it is the user's own, through a descriptor opened without following a symbolic link: a link
    is never followed to change permissions."""
    plugin = getattr(cache, "_plugin", None)
    if callable(getattr(plugin, "_get_key", None)):  # 2.19+: a key qualified by the schema, the plugin wrapped
        key, plugin = plugin._get_key(key), getattr(plugin, "__wrapped__", plugin)
    file_name = getattr(plugin, "_get_cache_file_name", None)
    if file_name is None:  # not a file cache (memory, redis, ...)
        return None
    path = file_name(key)
    directory = os.path.dirname(path) or "."
    for where, mode, kind in ((directory, 0o700, stat.S_ISDIR), (path, None, stat.S_ISREG)):
        try:
            handle = os.open(where, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return None
        except OSError as error:  # a symbolic link (ELOOP), no permission
            return "the cache %s %s cannot be used (%s)" % (
                "file" if kind is stat.S_ISREG else "directory",
                where,
                error.strerror,
            )
        try:
            info = os.fstat(handle)
            problem = _not_private(info, kind)
            if problem:
                return "the cache %s %s %s" % ("file" if kind is stat.S_ISREG else "directory", where, problem)
            if mode is not None and stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.geteuid():
                os.fchmod(handle, mode)
        finally:
            os.close(handle)
    return None


def _not_private(info, kind):
    """What makes a cache file or directory (``info``: its stat; ``kind``: stat.S_ISREG or S_ISDIR) not the user's
    own, or None."""
    if not kind(info.st_mode):
        return "is not a %s" % ("regular file" if kind is stat.S_ISREG else "directory")
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.geteuid():
        if kind is stat.S_ISDIR and info.st_uid == 0 and mode & stat.S_ISVTX:
            return None  # a sticky directory of root's (/tmp): no other user can replace a file of ours there
        return "belongs to user id %d, not to the user running Ansible (%d)" % (info.st_uid, os.geteuid())
    if mode & 0o022 and not (kind is stat.S_ISDIR and mode & stat.S_ISVTX):
        return "can be written by other users (mode %04o)" % mode
    return None


PLUGIN = "netaccess.nac.nac"


def names_this_plugin(path):
    """Whether the YAML file at ``path`` names this plugin (``plugin: netaccess.nac.nac``), read as text: at most
    its first 64 KiB, no YAML parsed (the file may be any other source's)."""
    try:
        with open(path, "rb") as handle:
            text = handle.read(65536).decode("utf-8", "replace")
    except (OSError, ValueError):
        return False
    return any(
        line.split("#", 1)[0].strip().replace('"', "").replace("'", "") in ("plugin: " + PLUGIN, "plugin: nac")
        for line in text.splitlines()
    )


def rename_hint(path):
    """``path`` with a name this plugin reads: its name's extension replaced by ``.nac.yml``."""
    directory, name = os.path.split(path)
    return os.path.join(directory, name.rsplit(".", 1)[0] + ".nac.yml")


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    """A thin adapter: the client, the options and the status query are module_utils' own (client.py, options.py,
    dot1x_query.py)."""

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
