# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build the apply engine's operation (apply.Operation) of each write verb a resource declares (nac/resources.py),
so that a new verb needs no operation of its own: how its uncertain write is decided from the list (``settles``)
picks the kind, and the declaration gives its words.

Two kinds: a write that makes a record (SHOWN: device_creation.creation, settled once the list shows the record)
and a write that removes one by its id (GONE: ``removal``, settled once the id is no longer listed).
"""

from typing import Callable, Dict

from ansible_collections.netaccess.nac.plugins.module_utils.nac.resources import GONE, SHOWN, Resource
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.apply import (
    CONFIRMED,
    MISSING,
    Answer,
    Operation,
    Wording,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.device_creation import creation


def operations(resource: Resource, writes: Dict[str, Callable]) -> Dict[str, Operation]:
    """Return {verb: Operation} for each verb of ``writes`` ({verb: the callable that sends one write}), as
    ``resource`` declares the verb: a creation's callable takes the body, a removal's the record's id."""
    return dict((verb, operation(resource, verb, send)) for verb, send in writes.items())


def operation(resource: Resource, verb: str, send: Callable) -> Operation:
    """Return the operation of one write verb, chosen by how the declaration says its writes settle."""
    settles = resource.verb(verb).settles
    if settles == SHOWN:
        return creation(send, resource, verb)
    if settles == GONE:
        return removal(resource, verb, send)
    raise ValueError("the verb %r of the %s resource is no write (it settles %r)" % (verb, resource.name, settles))


def removal(resource: Resource, verb: str, remove: Callable) -> Operation:
    """Return the operation that removes the record of an action by its id (``action.id``, which the plan found in
    the list) with ``remove(id)``: settled, and confirmed, once no listed record has that id."""

    def write(action):
        return Answer(action.id, None, remove(action.id))

    return Operation(
        write=write,
        index=resource.index,
        shows=lambda action, index: index.by_id.get(action.id, []),
        settled=lambda action, shown: not shown,
        confirm=lambda action, index: MISSING if index.by_id.get(action.written_id) else CONFIRMED,
        preview=lambda action: None,
        wording=Wording(**resource.verb(verb).words),
    )
