# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Check the inventory's own files, so that a cache another user can write is never trusted and a source with a
name the plugin does not read gets a hint."""

import os
import stat


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
