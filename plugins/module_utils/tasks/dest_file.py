# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``dest`` of an export (nac_device_info's device list, nac_dot1x_status's results), no Ansible imports.

An export is written to a temporary file (mode 0600) and then takes the place of ``dest`` as ansible.builtin.copy
puts a file in place: ``dest`` is replaced at once (os.replace, after fsync) only when its content differs, and the
export is ``changed`` only then (or when the mode of an identical file was not 0600). In check mode the temporary
file is written in the system's temporary directory, never beside ``dest``, compared with ``dest`` and removed:
nothing is written where ``dest`` is, and ``changed`` says what a run would do. A ``dest`` that is a symbolic link
is refused: copy would replace the link itself with a file, which silently cuts what the link pointed at off from
the export; the user gives the file's own path instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import filecmp
import os
import stat
import tempfile

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacConfigError

MODE = 0o600


def check_dest(dest):
    """Raise NacConfigError when ``dest`` cannot be an export's file: a directory, a symbolic link, or a path in a
    directory that does not exist."""
    if os.path.islink(dest):
        raise NacConfigError(
            "dest %s is a symbolic link: give the path of the file itself (a link is never replaced nor followed, "
            "so that an export never writes where a link planted in its place points)" % dest
        )
    if os.path.isdir(dest):
        raise NacConfigError("dest %s is a directory: it must be the path of a file" % dest)
    directory = os.path.dirname(os.path.abspath(dest))
    if not os.path.isdir(directory):
        raise NacConfigError("dest %s cannot be written: its directory %s does not exist" % (dest, directory))


def unwritable(dest, error):
    """The NacConfigError of an OSError writing ``dest`` or its temporary file."""
    return NacConfigError("dest %s cannot be written: %s" % (dest, error.strerror or error))


def temporary_file(dest, prefix, check_mode=False):
    """(file descriptor, path) of a new temporary file (mode 0600) for ``dest``: beside it, or in the system's
    temporary directory in check mode (nothing is written where ``dest`` is)."""
    check_dest(dest)
    directory = tempfile.gettempdir() if check_mode else os.path.dirname(os.path.abspath(dest))
    try:
        return tempfile.mkstemp(prefix=prefix, dir=directory)
    except OSError as error:
        raise unwritable(dest, error) from None


def same_file(temporary, dest):
    """Whether ``dest`` is a regular file (not a link) with the content of ``temporary``."""
    try:
        status = os.lstat(dest)
    except OSError:
        return False
    if not stat.S_ISREG(status.st_mode) or status.st_size != os.path.getsize(temporary):
        return False
    return filecmp.cmp(temporary, dest, shallow=False)


def put_in_place(temporary, dest, check_mode=False):
    """Put the written ``temporary`` file in the place of ``dest`` as ansible.builtin.copy does (the module's
    docstring); in check mode only compare. True when ``dest`` changed (would change); the temporary file is gone
    either way."""
    try:
        check_dest(dest)  # (made a link while the export was written)
        if not same_file(temporary, dest):
            if check_mode:
                os.unlink(temporary)
            else:
                os.replace(temporary, dest)
            return True
        os.unlink(temporary)
        if stat.S_IMODE(os.lstat(dest).st_mode) == MODE:
            return False
        if not check_mode:
            os.chmod(dest, MODE)
        return True
    except OSError as error:
        raise unwritable(dest, error) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


class StagedFile:
    """Hold a file written beside its dest (``stream``, open on ``temporary``) until it is put in place.

    Closing removes the temporary file unless it was committed (``temporary`` set to None), so that a failed
    task leaves nothing beside dest; use it in a ``with`` block."""

    stream = None
    temporary = None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def close(self):
        """Remove the temporary file (when not committed)."""
        if self.stream is not None and not self.stream.closed:
            self.stream.close()
        if self.temporary is not None and os.path.exists(self.temporary):
            os.unlink(self.temporary)
        self.temporary = None
