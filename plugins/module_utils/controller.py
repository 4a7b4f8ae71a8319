# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Is the controller that started this module still there? (no Ansible imports; Linux ``/proc``)

Long work (nac_device's creations) asks ``controller_watch()`` before each write, so that a killed
ansible-playbook does not leave a module sending on its own.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import select
import time

CONTROLLER_GONE = "the controller that started this task is gone (ansible-playbook was stopped)"
_SHELLS = frozenset(("sh", "bash", "dash", "ash", "ksh", "zsh"))
# Seconds between two looks: a look reads a stat file per process of the chain, and long work asks before
# every write (hundreds a second from many threads); a controller that is gone is noticed this much later.
LOOK_EVERY = 0.1


def controller_watch(proc="/proc", every=LOOK_EVERY, clock=time.monotonic):
    """A cheap ``should_stop()`` for long work: CONTROLLER_GONE once the process that started the
    module is gone, else None.

    Ansible starts a module as ``sh -c 'sh -c "python AnsiballZ_..."'`` from a worker process forked
    by ansible-playbook (over ssh: from the sshd session). The module's stdout is a pipe read by that
    worker. Two signs, either enough: the pipe has no reader any more (poll shows POLLERR/POLLHUP on
    fd 1), or a process of the chain module -> shells -> worker -> its parent changed parent (a
    process whose parent dies is re-parented to init): killing ansible-playbook re-parents its worker,
    killing the worker re-parents the shell. The chain is read from ``proc`` (Linux); elsewhere only
    the module's own parent and the pipe are watched.

    It looks at most once per ``every`` seconds (of ``clock``); in between it answers what it last saw.
    """
    chain = _ancestry(proc)
    try:
        poller = select.poll()
        poller.register(1, 0)  # no event asked for: POLLERR, POLLHUP and POLLNVAL are always reported
    except (AttributeError, OSError, ValueError):
        poller = None
    seen = dict(at=None, answer=None)  # the last look: when, and what it found

    def look():
        if any(_parent(pid, proc) != parent for pid, parent in chain):
            return CONTROLLER_GONE
        if poller is not None and any(events & (select.POLLERR | select.POLLHUP) for dummy, events in poller.poll(0)):
            return CONTROLLER_GONE
        return None

    def gone():
        now = clock()
        if seen["at"] is None or now - seen["at"] >= every:
            seen["at"], seen["answer"] = now, look()
        return seen["answer"]

    return gone


def _ancestry(proc):
    """[(pid, parent pid)] from this process up to the first one that is not a shell, and that one."""
    chain = [(os.getpid(), _parent(os.getpid(), proc))]
    for dummy in range(8):
        pid, parent = chain[-1]
        if parent <= 1 or _name(pid, proc) not in _SHELLS and len(chain) > 1:
            break
        grandparent = _parent(parent, proc)
        if grandparent is None:
            break
        chain.append((parent, grandparent))
    return chain


def _stat(pid, proc):
    try:
        with open(os.path.join(proc, str(pid), "stat")) as stat:
            text = stat.read()
    except (IOError, OSError):
        return None
    name, dummy, rest = text.partition(" (")[2].rpartition(") ")
    return name, rest.split()


def _parent(pid, proc):
    """The parent pid of ``pid``; os.getppid() for this process where /proc is not there; None when gone."""
    stat = _stat(pid, proc)
    if stat is None:
        return os.getppid() if pid == os.getpid() else None
    return int(stat[1][1])


def _name(pid, proc):
    stat = _stat(pid, proc)
    return stat[0] if stat else None
