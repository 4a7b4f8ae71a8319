# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Glue between Ansible modules and the pure API client.

Owns, once for every module: the connection options (with their environment fallbacks), building
the client, turning errors into ``fail_json(msg=..., failure={...})``, and check mode and diff:
in check mode the client is read-only, so a write that slipped through is refused, never sent.
Every message, warning and ``failure`` field leaves through here shown safely (server_text.shown) and with
every form of the credentials masked; the one warning of a task without TLS verification too; and every value
of a result, failed or not, with every form of the credentials masked (masking.mask).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import traceback

from ansible.module_utils import basic
from ansible.module_utils.basic import AnsibleModule, env_fallback, missing_required_lib

from ansible_collections.netaccess.nac.plugins.module_utils.ansible_glue.controller_alive import controller_watch
from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import hidden_forms, mask
from ansible_collections.netaccess.nac.plugins.module_utils.common.options import (
    CONNECTION_OPTIONS,
    INSECURE_TLS,
    SECRET_OPTIONS,
    connection_values,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown
from ansible_collections.netaccess.nac.plugins.module_utils.nac.client import (
    H11_IMPORT_ERROR,
    HAS_H11,
    HAS_REQUESTS,
    REQUESTS_IMPORT_ERROR,
    NacClient,
)
from ansible_collections.netaccess.nac.plugins.module_utils.tasks.progress import Progress

# The progress file's path, set by the collection's action plugins (plugin_utils/progress.py) on the controller.
PROGRESS_FILE = "NAC_PROGRESS_FILE"


def progress_file_writer(path):
    """A progress line sink appending to ``path`` (the file the action plugin shows on the controller), or None
    without one. A file that cannot be written only loses the progress lines, never the task."""
    if not path:
        return None

    def emit(line):
        try:
            with open(path, "a") as sink:
                sink.write(shown(line) + "\n")
        except (IOError, OSError):
            pass

    return emit


def connection_argument_spec():
    """The options of the ``netaccess.nac.connection`` doc fragment, from options.CONNECTION_OPTIONS."""
    spec = {}
    for declared in CONNECTION_OPTIONS.values():
        option = dict(type=declared.type)  # none is required: api_url may come from NAC_API_URL (checked by the client)
        if declared.default is not None:
            option["default"] = declared.default
        if declared.secret:
            option["no_log"] = True
        if declared.env:
            option["fallback"] = (env_fallback, [declared.env])
        spec[declared.name] = option
    return spec


class _AnsibleModule(AnsibleModule):
    """An AnsibleModule whose failures hide the credentials, in every form, whatever went wrong.

    ansible-core forgets every no_log value when an item of a list-of-dicts option is not a dict
    (nac_device's ``devices: [null]``): its argument error would show ``api_key`` in the invocation.
    A password can also hide in ``api_url`` (``https://user:password@host``, which NacClient refuses),
    and a secret can be shown escaped or URL-encoded: every form of ``hidden_forms`` is masked.
    """

    client_forms = ()  # the client's own (NacClient.secrets: the Basic token, a proxy's credentials), once it exists

    def __init__(self, argument_hint=None, prepare=None, **kwargs):
        self._argument_hint = argument_hint
        self._prepare = prepare
        super(_AnsibleModule, self).__init__(**kwargs)
        self._argument_hint = None  # the parameters are read: later failures are the module's own

    def _load_params(self):
        super(_AnsibleModule, self)._load_params()
        if self._prepare is not None:  # parameters given as text (a survey answer) read before Ansible checks them
            try:
                self._prepare(self.params)
            except ValueError as error:
                self._argument_hint = None
                self.fail_json(msg=str(error))
        if self._argument_hint is not None:  # what is wrong with the parameters as given, in the module's words
            self._argument_hint = self._argument_hint(self.params) or None

    def _forms(self):
        params = getattr(self, "params", None) or {}  # (a warning may come while the parameters are read)
        return hidden_forms(
            [params.get(name) for name in SECRET_OPTIONS],
            params.get("api_url"),
            basic=[(params.get("username"), params.get("password"))],
            forms=self.client_forms,
        )

    def fail_json(self, msg, **kwargs):
        if isinstance(self._argument_hint, str):  # Ansible refused the parameters: the module says what is wrong
            msg = self._argument_hint
        forms = self._forms()
        self.no_log_values.update(forms)  # Ansible masks them in the whole result; the message here too
        msg = mask(shown(msg), forms)
        if isinstance(kwargs.get("failure"), dict):  # the request and the server's reason: text read by people
            kwargs["failure"] = dict(
                (key, mask(shown(value), forms) if isinstance(value, str) else value)
                for key, value in kwargs["failure"].items()
            )
        super(_AnsibleModule, self).fail_json(msg, **mask(kwargs, forms))

    def warn(self, warning, **kwargs):
        super(_AnsibleModule, self).warn(mask(shown(warning), self._forms()), **kwargs)

    def exit_json(self, **kwargs):
        """The result with every form of the credentials masked in every value (a server that echoes the
        Authorization header in a status reply), by design: not left to Ansible's masking of no_log values. Then
        exit as AnsibleModule does, but Ansible's masking (remove_values, a walk in Python that copies the whole
        result: 35 s of 1,000,000 device records) walks only the values that may hold a no_log value: a list or
        dict of the result whose JSON (written in C, a second for those records) holds none of them, in the form a
        string takes in JSON, is passed on as it is (unwalked)."""
        forms = self._forms()
        self.no_log_values.update(forms)
        kwargs = mask(kwargs, forms)
        unwalked = clean_values(kwargs, self.no_log_values)
        if not unwalked:
            return super(_AnsibleModule, self).exit_json(**kwargs)
        walk = basic.remove_values

        def remove_values(value, no_log_strings):
            if not isinstance(value, dict) or not any(value.get(key) is held for key, held in unwalked.items()):
                return walk(value, no_log_strings)
            rest = dict((key, item) for key, item in value.items() if unwalked.get(key) is not item)
            masked = walk(rest, no_log_strings)
            masked.update((key, item) for key, item in value.items() if unwalked.get(key) is item)
            return masked

        basic.remove_values = remove_values
        try:
            super(_AnsibleModule, self).exit_json(**kwargs)
        finally:
            basic.remove_values = walk


LARGE_VALUE = 1000  # items of a list (or dict) in a result worth checking whole rather than walking


def clean_values(result, no_log_values):
    """{key: value} of the large lists and dicts of ``result`` (LARGE_VALUE items or more) that hold no
    ``no_log_values`` anywhere (in a key, a string, or a number's text): none of them is found in the value's
    JSON, in the form a string takes there (json.dumps escapes ``"``, ``\\`` and control characters, character by
    character, so a string that holds a secret holds it escaped in the JSON). Nothing when a secret is a part of
    ``true``, ``false`` or ``null``'s Python text (``True``: remove_values reads booleans and None so) or a value
    is not JSON."""
    secrets = [value for value in no_log_values if value]
    if any(secret in word for secret in secrets for word in ("True", "False", "None")):
        return {}
    forms = [json.dumps(secret, ensure_ascii=False)[1:-1] for secret in secrets]
    clean = {}
    for key, value in result.items():
        if not isinstance(value, (list, dict)) or len(value) < LARGE_VALUE:
            continue
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            continue
        if not any(form in text for form in forms):
            clean[key] = value
    return clean


class TaskFailed(NacError):
    """Raised by a module's action to fail the task while still returning ``result``: a NacError (the one
    failure channel of ``NacModule.run``) without a structured ``failure`` of its own, since what failed is
    in the result (each entry's ``error`` and ``failure``)."""

    failure = None

    def __init__(self, message, **result):
        super(TaskFailed, self).__init__(message)
        self.result = result


class NacModule:
    """An AnsibleModule with the connection options, a NAC client, and one way to change things.

    A module declares its own ``argument_spec`` and an action ``run(nac) -> dict``; the action
    talks to the service through ``nac.client`` (read-only in check mode) and reports each change
    with ``nac.change()``. ``argument_hint(params)``: a message saying what is wrong with the parameters as given
    (before Ansible checks them), shown instead of Ansible's when Ansible refuses them; None when it sees nothing.
    ``prepare(params)``: changes the parameters as given before Ansible checks them (text read as the list it
    spells); a ValueError it raises fails the task with its message.
    """

    def __init__(self, argument_spec=None, read_only=False, pool_size=16, argument_hint=None, prepare=None, **kwargs):
        spec = connection_argument_spec()
        spec.update(argument_spec or {})
        kwargs.setdefault("supports_check_mode", True)
        self.ansible = _AnsibleModule(argument_spec=spec, argument_hint=argument_hint, prepare=prepare, **kwargs)
        if not HAS_REQUESTS:
            self.ansible.fail_json(msg=missing_required_lib("requests"), exception=REQUESTS_IMPORT_ERROR)
        if not HAS_H11:
            self.ansible.fail_json(msg=missing_required_lib("h11"), exception=H11_IMPORT_ERROR)
        self.params = self.ansible.params
        self.check_mode = self.ansible.check_mode
        if callable(pool_size):  # sized from the parameters, e.g. a module's concurrency
            pool_size = pool_size(self.params)
        self.result = dict(changed=False)
        self._diffs = []
        try:
            self.client = NacClient(
                read_only=read_only or self.check_mode,
                pool_size=pool_size,
                should_stop=controller_watch(),  # a list stops between pages once the controller is gone
                **connection_values(self.params.get),
            )
        except NacError as error:
            self.fail(error.message, failure=error.failure)
        self.ansible.client_forms = self.client.secrets
        if not self.params["validate_certs"]:
            self.warn(INSECURE_TLS)

    def warn(self, message):
        self.ansible.warn(message)

    def progress(self):
        """A progress.Progress of this task's long work, told to the controller when its action plugin asked for
        it (NAC_PROGRESS_FILE), counting the client's refusals waited out."""
        emit = progress_file_writer(os.environ.get(PROGRESS_FILE))
        return Progress(self.ansible._name.split(".")[-1], emit, refusals=lambda: self.client.refusals)

    def change(self, name, before, after):
        """Report that ``name`` changed (in check mode: would change) from ``before`` to ``after``
        (dicts; None where it does not exist): sets ``changed`` and adds a diff entry."""
        self.result["changed"] = True
        self._diffs.append(dict(before=before or {}, after=after or {}, before_header=name, after_header=name))

    def run(self, action):
        """Run ``action(self)``, merge the dict it returns into the result and exit; every NacError
        (TaskFailed among them) becomes a clean failure with what it still returns (``result``) and its
        ``failure``, and any other exception (a bug) a failure naming it, with its traceback for
        ``exception`` (shown when Ansible shows tracebacks)."""
        try:
            self.result.update(action(self) or {})
        except NacError as error:
            self.result.update(error.result)
            self.fail(error.message, **({} if error.failure is None else dict(failure=error.failure)))
        except Exception as error:  # pylint: disable=broad-except
            self.fail(
                "Internal error in %s: %s: %s \u2014 please report it"
                % (self.ansible._name, type(error).__name__, error),
                exception=traceback.format_exc(),
            )
        finally:
            self.client.close()
        self.ansible.exit_json(**self._with_diff())

    def fail(self, message, **extra):
        result = self._with_diff()
        result.update(extra)
        self.ansible.fail_json(msg=message, **result)

    def _with_diff(self):
        result = dict(self.result)
        if self.ansible._diff and self._diffs:
            result["diff"] = self._diffs[0] if len(self._diffs) == 1 else self._diffs
        return result
