# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read what each HTTP status of a failed request means for the NAC API (the API guide's "Retries and outcomes"):
the one place that maps a status to an error (no Ansible imports). client.NacClient.request_steps raises what
``http_error`` makes of a reply that is not a success.
"""

from typing import Optional

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import (
    NacAuthError,
    NacError,
    NacHTTPError,
    NacNotFound,
    NacResponseError,
    NacServerError,
)
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import server_reason

# What an account needs to be allowed a request, for the message of a refusal (HTTP 401/403): a request that
# needs more names it (``request``'s ``needs``), as firing an intent the API guide names does.
ACCESS_NEEDED = "the privilege public_api (and the feature's own privilege)"


def http_error(
    client, method: str, path: str, reply, changes: bool = False, attempts: int = 1, needs: Optional[str] = None
) -> NacError:
    """Make the NacError of a non-success reply (a response.Reply, after ``attempts`` requests) of ``client``'s
    (a client.NacClient), as the API guide reads each status, so that one place maps a status to an error. The
    error of a request that ``changes`` the server states ``outcome_unknown``: true for a server fault or a
    redirect (it may have been committed). ``needs``: what the account needs to be allowed the request
    (ACCESS_NEEDED)."""
    status = reply.status_code
    reason = server_reason(reply, client.secrets)
    where = "%s %s" % (method, path)
    said = " The server said: %s" % reason if reason else ""
    tries = " (%d attempts)" % attempts if attempts > 1 else ""
    details = dict(method=method, path=path, status=status, reason=reason, url=client.display_url)
    credentials_accepted = client.succeeded  # read once: another thread may be answered meanwhile
    if changes:
        # A redirect may answer a write that was processed (a 303 says it was): its outcome is unknown.
        details["outcome_unknown"] = status < 400 or (status >= 500 and (status != 500 or credentials_accepted))
    if status < 400:
        error = NacHTTPError(
            "The NAC API answered %s with a redirect (HTTP %d) to %s, which is not followed%s: set api_url to the "
            "address the service redirects to (https:// instead of http://, for example)."
            % (
                where,
                status,
                strip_userinfo(reply.headers.get("Location") or "nowhere"),
                " (the write may have been processed all the same)" if changes else "",
            ),
            **details,
        )
    elif status == 500 and not credentials_accepted:
        error = NacAuthError(
            "The NAC API answered 'Server error' (HTTP 500) to %s%s. The API gives this reply for an invalid "
            "or missing API key (or a wrong username, password or tenant): check api_key / NAC_API_KEY, or "
            "username, password and tenant. If the credentials are right, the server itself failed.%s"
            % (where, tries, said),
            **details,
        )
    elif status >= 500:
        accepted = ""
        if status == 500:
            accepted = " (not of the credentials: an earlier request of this task was answered)"
        error = NacServerError(
            "The NAC API failed on %s with HTTP %d%s: a fault of the server or of a proxy in front of it%s.%s"
            % (where, status, tries, accepted, said),
            **details,
        )
    elif status in (401, 403):
        error = NacAuthError(
            "Access refused (HTTP %d) to %s: the account needs %s.%s" % (status, where, needs or ACCESS_NEEDED, said),
            **details,
        )
    elif status == 404:
        error = NacNotFound("Not found (HTTP 404): %s.%s" % (where, said), **details)
    else:
        error = NacHTTPError("The NAC API refused %s with HTTP %d.%s" % (where, status, said), **details)
    return client.scrubbed(error)


def shape_error(client, method: str, path: str, what: str) -> NacError:
    """Make the error of a reply of ``client``'s (a client.NacClient) whose shape is not what the API guide says,
    naming ``what`` was wrong, with its credentials masked."""
    return client.scrubbed(
        NacResponseError(
            "%s %s: unexpected reply from %s: %s" % (method, path, client.display_url, what),
            method=method,
            path=path,
            url=client.display_url,
        )
    )
