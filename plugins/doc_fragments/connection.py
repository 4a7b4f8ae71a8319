# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment:
    """Connection options shared by every module and plugin of netaccess.nac."""

    DOCUMENTATION = r"""
options:
  api_url:
    description:
      - Base address of the NAC service, for example V(https://nac.example.com).
      - Paths C(/api/...) are appended to it; a trailing slash is harmless.
      - It may have a path, but no query, fragment or credentials (C(user:password@)); give those as
        O(username) and O(password), or O(api_key).
      - Redirects are not followed; a service that redirects (from V(http://) to V(https://), for
        example) fails the task with the address it redirects to. A device creation answered with a
        redirect may have been processed all the same, so it is looked for in the device list.
      - If not set, the environment variable E(NAC_API_URL) is used. One of the two is needed, so the option
        itself is not required (the variable alone will do); a task with neither fails naming both.
    type: str
  api_key:
    description:
      - "API key of an account with the privilege C(public_api), sent as C(Authorization: Bearer <key>)."
      - Give either O(api_key), or O(username) and O(password).
      - An invalid key makes the service answer C(Server error) (HTTP 500); the modules say so.
      - Printable ASCII without spaces, as a Bearer token is; a key with a line break (a file's trailing
        newline, for example), another control character or a non-ASCII character is refused before any request.
      - If not set, the environment variable E(NAC_API_KEY) is used.
    type: str
  username:
    description:
      - Name of the account for HTTP Basic authentication, the real product's documented scheme.
      - Use a dedicated service account. Requires O(password); excludes O(api_key).
      - O(username) and O(password) are sent as UTF-8, so they may hold any printable character (the
        username no C(:)); line breaks and other control characters are refused before any request.
      - If not set, the environment variable E(NAC_USERNAME) is used.
    type: str
  password:
    description:
      - Password of O(username).
      - If not set, the environment variable E(NAC_PASSWORD) is used.
    type: str
  tenant:
    description:
      - Tenant token identifying the site, sent as the C(X-Tenant) header on every request when given.
      - An identifier, not a secret, so it is not hidden in output (hiding it would also mask every
        value in the results that happens to equal it, such as a group of the same name).
      - Printable ASCII; it may not start or end with a space.
      - If not set, the environment variable E(NAC_TENANT) is used.
    type: str
  validate_certs:
    description:
      - Whether to verify the TLS certificate of the service.
      - Set to V(false) only for a lab service with a self-signed certificate; prefer O(ca_path).
        With V(false) every task (and the inventory, and the event source) warns once that the certificate is
        not verified.
      - Only Ansible's boolean words are accepted (V(yes)/V(no), V(true)/V(false), V(on)/V(off), V(1)/V(0),
        V(y)/V(n), V(t)/V(f), in any case), from the environment too; anything else (V(ture), an empty
        value, V(2), V(enabled)) fails naming the option, rather than turning verification off.
      - If not set, the environment variable E(NAC_VALIDATE_CERTS) is used.
    type: bool
    default: true
  ca_path:
    description:
      - PEM bundle of certificate authorities to trust for the service's certificate (or a directory
        of them prepared with C(c_rehash)).
      - A path that does not exist, cannot be read or holds no PEM certificate fails the task before any request.
      - It cannot help with a certificate issued for another name than the host of O(api_url); use an
        address the certificate names, or O(validate_certs=false).
      - If not set, the environment variable E(NAC_CA_PATH) is used.
    type: path
  timeout:
    description:
      - Seconds that each attempt of a request may take as a whole, greater than 0 and at most 86400 -
        connecting, sending and receiving the complete reply (a reply that trickles in slowly does not extend it).
      - If not set, the environment variable E(NAC_TIMEOUT) is used.
    type: float
    default: 30
  max_retries:
    description:
      - How often a request that failed in a retryable way is tried again, with backoff. At most 10; a
        larger value counts as 10.
      - Which failures are retried, and what becomes of a failed device creation, is in
        R(Retries and outcomes,ansible_collections.netaccess.nac.docsite.api_retries) of the API guide.
    type: int
    default: 3
  unreachable_timeout:
    description:
      - Seconds to wait for a service that stops answering in the middle of a task (connections refused
        or timing out, no reply to anything, as during a restart), from 0 (never wait) to 3600.
      - While it cannot be reached, every request of the task waits, and one probe request checks with
        backoff whether it answers again; then the task goes on where it was, without spending O(max_retries).
        After this many seconds the waiting requests fail, saying so.
      - Only once the service has answered a request of the task - a wrong address or port fails after
        the ordinary retries, in a few seconds.
      - Details in R(Retries and outcomes,ansible_collections.netaccess.nac.docsite.api_retries) of the API guide.
      - If not set, the environment variable E(NAC_UNREACHABLE_TIMEOUT) is used.
    type: float
    default: 60
  max_reply_mb:
    description:
      - The largest reply the collection reads, in MiB (1 MiB is 1,048,576 bytes), from 1 to 65536.
      - A reply announced as larger (C(Content-Length)) fails the task at once, without being read; a reply
        of unannounced length fails as soon as what arrived passes the limit. The message names this option.
        So a runaway reply never fills the memory of the host that runs the task.
      - The limit is per reply. A device list that the service sends in pages (RFC 8288 C(Link) headers)
        may be larger as a whole; see
        R(Pagination and reply sizes,ansible_collections.netaccess.nac.docsite.api_pages) in the API guide.
      - The default holds a list of about a million devices.
      - If not set, the environment variable E(NAC_MAX_REPLY_MB) is used.
    type: int
    default: 256
  max_list_items:
    description:
      - The most items one list (the device list, the intents) may have, all its pages together, from 1 to
        1,000,000,000. A list that has more fails the task, naming this option, before anything is done with it.
      - The default, two million, passes a NAC of a million devices twice over, and stops a service that pages
        without end after a bounded amount of memory; see
        R(Limits,ansible_collections.netaccess.nac.docsite.api_limits) in the API guide.
      - If not set, the environment variable E(NAC_MAX_LIST_ITEMS) is used.
    type: int
    default: 2000000
  max_list_mb:
    description:
      - The most MiB of replies one list may take, all its pages together, from 1 to 1048576. Each page is
        read with what is left of it as its limit (or O(max_reply_mb), when that is less), so reading stops as
        soon as the list passes it; the message names this option.
      - The default, 1024 MiB, holds a million devices of about a kilobyte each; see
        R(Limits,ansible_collections.netaccess.nac.docsite.api_limits) in the API guide.
      - If not set, the environment variable E(NAC_MAX_LIST_MB) is used.
    type: int
    default: 1024
requirements:
  - requests
  - h11 (the HTTP/1.1 parser that reads every reply of the service)
notes:
  - All modules of this collection are in the action group C(netaccess.nac.nac), so the connection
    options can be set once with C(module_defaults) for C(group/netaccess.nac.nac).
  - The collection never shows credentials (O(api_key), O(password), a password in O(api_url)) in results,
    errors or its logs, neither as given nor escaped nor URL-encoded. ansible-core itself prints every
    module's arguments in clear with C(ANSIBLE_DEBUG=1), credentials given as arguments included; those
    given through the E(NAC_API_KEY) or E(NAC_PASSWORD) environment variables are not module arguments.
"""

    # Plugins (the inventory plugin) read their options through Ansible's configuration system,
    # which takes environment variables from ``env`` entries; module documentation cannot carry
    # them. Used together with DOCUMENTATION, whose option entries these extend:
    #   extends_documentation_fragment: [netaccess.nac.connection, netaccess.nac.connection.plugins]
    PLUGINS = r"""
options:
  api_url:
    env:
      - name: NAC_API_URL
  api_key:
    env:
      - name: NAC_API_KEY
  username:
    env:
      - name: NAC_USERNAME
  password:
    env:
      - name: NAC_PASSWORD
  tenant:
    env:
      - name: NAC_TENANT
  validate_certs:
    env:
      - name: NAC_VALIDATE_CERTS
  ca_path:
    env:
      - name: NAC_CA_PATH
  timeout:
    env:
      - name: NAC_TIMEOUT
  unreachable_timeout:
    env:
      - name: NAC_UNREACHABLE_TIMEOUT
  max_reply_mb:
    env:
      - name: NAC_MAX_REPLY_MB
  max_list_items:
    env:
      - name: NAC_MAX_LIST_ITEMS
  max_list_mb:
    env:
      - name: NAC_MAX_LIST_MB
"""
