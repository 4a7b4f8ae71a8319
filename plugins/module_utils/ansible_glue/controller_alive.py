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

CONTROLLER_GONE = "the controller that started this task is gone (ansible-playbook was stopped)"
_SHELLS = frozenset(("sh", "bash", "dash", "ash", "ksh", "zsh"))


def controller_watch(proc="/proc"):
    """A cheap ``should_stop()`` for long work: CONTROLLER_GONE once the process that started the
    module is gone, else None.

    Ansible starts a module as ``sh -c 'sh -c "python AnsiballZ_..."'`` from a worker process forked
    by ansible-playbook (over ssh: from the sshd session). The module's stdout is a pipe read by that
    worker. Two signs, either enough: the pipe has no reader any more (poll shows POLLERR/POLLHUP on
    fd 1), or a process of the chain module -> shells -> worker -> its parent changed parent (a
    process whose parent dies is re-parented to init): killing ansible-playbook re-parents its worker,
    killing the worker re-parents the shell. The chain is read from ``proc`` (Linux); elsewhere only
    the module's own parent and the pipe are watched.
    """
    chain = _ancestry(proc)
    try:
        poller = select.poll()
        poller.register(1, 0)  # no event asked for: POLLERR, POLLHUP and POLLNVAL are always reported
    except (AttributeError, OSError, ValueError):
        poller = None

    def gone():
        if any(_parent(pid, proc) != parent for pid, parent in chain):
            return CONTROLLER_GONE
        if poller is not None and any(events & (select.POLLERR | select.POLLHUP) for dummy, events in poller.poll(0)):
            return CONTROLLER_GONE
        return None

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
    """(name, [the fields after it]) of ``pid``'s stat file, or None. Read with os.open/os.read: a look
    reads one per process of the chain before every write, and a Python file object costs several
    times the three system calls."""
    try:
        fd = os.open(os.path.join(proc, str(pid), "stat"), os.O_RDONLY)
        try:
            text = os.read(fd, 4096)
        finally:
            os.close(fd)
    except (IOError, OSError):
        return None
    name, dummy, rest = text.partition(b" (")[2].rpartition(b") ")
    return name.decode("utf-8", "replace"), rest.split()


def _parent(pid, proc):
    """The parent pid of ``pid``; os.getppid() for this process where /proc is not there; None when gone."""
    stat = _stat(pid, proc)
    if stat is None:
        return os.getppid() if pid == os.getpid() else None
    return int(stat[1][1])


def _name(pid, proc):
    stat = _stat(pid, proc)
    return stat[0] if stat else None
