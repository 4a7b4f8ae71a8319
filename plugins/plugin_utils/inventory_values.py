# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Make the NAC's values inert for the inventory, so that no server string is ever run as a template.

The inventory plugin netaccess.nac.nac sets every value of a host through ``inert`` and names every host through
``inert_name``; ``Shared`` makes each string inert once, however many hosts hold it (ansible-core 2.19+ also tags
it once with the inventory source's Origin)."""

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
