# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read a whole list of the NAC API, every page of it, and check each record, so that a list is used whole or not
at all (the API guide, "Pagination and reply sizes"). client.NacClient.list_records reads its lists here.
"""

import json

from ansible_collections.netaccess.nac.plugins.module_utils.common.errors import NacError, NacResponseError
from ansible_collections.netaccess.nac.plugins.module_utils.common.masking import strip_userinfo
from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import excerpt, json_type, shown
from ansible_collections.netaccess.nac.plugins.module_utils.http.transport import MIB
from ansible_collections.netaccess.nac.plugins.module_utils.nac.device_list import Device
from ansible_collections.netaccess.nac.plugins.module_utils.nac.hostnames import HOSTNAME_MAX
from ansible_collections.netaccess.nac.plugins.module_utils.nac.links import LinkError, next_links, path_under
from ansible_collections.netaccess.nac.plugins.module_utils.nac.pagination import (
    MAX_PAGES,
    Page,
    Records,
    envelope_keys,
    partial_sign,
)
from ansible_collections.netaccess.nac.plugins.module_utils.nac.statuses import shape_error


class ListReader:
    """Read the lists of one client (a client.NacClient: its requests, its list limits, its ``should_stop``)."""

    def __init__(self, client):
        self.client = client

    def records(self, path, key, key_type, noun, name=None, decoder=None, into=None):
        """The records of a list endpoint, each with its ``key`` (and its string ``name`` when given) checked
        in one pass: the whole list, or a NacResponseError. ``decoder``: how each page is decoded (device_list.py);
        ``into``: where the records go (``_read_pages``)."""
        collected = into if into is not None else Records(key, name or key)
        reply = self._read_list(path, noun, decoder, collected)
        for index, record in collected.indexed():
            if isinstance(record, Device):  # kept compactly: it had both (device_list.device_keeper)
                if len(record.hostname) > HOSTNAME_MAX:
                    raise self._implausible(path, index, record.id, record.hostname)
                continue
            value = record.get(key) if isinstance(record, dict) else None
            if not isinstance(value, key_type) or isinstance(value, bool):
                raise shape_error(
                    self.client,
                    "GET",
                    path,
                    "item %d has no %s %r: %s"
                    % (
                        index,
                        key_type.__name__,
                        key,
                        excerpt(json.dumps(record, default=str), 80, self.client.secrets),
                    ),
                )
            if name is not None and not isinstance(record.get(name), str):
                raise shape_error(
                    self.client, "GET", path, "item %d (%s %s) has no string %r" % (index, key, value, name)
                )
            if name is not None and len(record[name]) > HOSTNAME_MAX:
                raise self._implausible(path, index, value, record[name])
        return reply

    def _implausible(self, path, index, ident, hostname):
        """The error of a listed device whose hostname is no plausible name (longer than a DNS name may be)."""
        return shape_error(
            self.client,
            "GET",
            path,
            "item %d (id %s) has a hostname of %d characters, more than the %d a hostname may have (%s): not a "
            "device name, so the list is not used" % (index, ident, len(hostname), HOSTNAME_MAX, shown(hostname, 40)),
        )

    def _read_list(self, path, noun, decoder, records):
        """GET ``path`` and every page after it (``_read_pages``). A list whose pages shifted while they were
        read (pagination.Shifts: the same record on two pages, a count that changed) is read again from the start,
        once: a list that shifts again is a NacResponseError saying so."""
        shifted = None
        while True:
            shift = self._read_pages(path, noun, decoder, records)
            if shift is None:
                return records.result()
            records.restart()  # nothing held while the list is read again
            if shifted is not None:
                raise self._partial(
                    path,
                    "the list changed while its pages were read, and again when it was read once more (%s; then %s): "
                    "another client is changing the devices meanwhile, try again later" % (shifted, shift),
                )
            shifted = shift

    def _read_pages(self, path, noun, decoder, records):
        """GET ``path`` and every page after it, each page's array added to ``records`` (pagination.Records, or a
        device_export.DeviceFile): None, or what shows that the pages shifted while they were read (pagination.Shifts).

        A page names the next one with an RFC 8288 ``Link: <...>; rel="next"`` header; it is followed
        when it is on api_url's origin and under its path, for at most pagination.MAX_PAGES pages, never to a
        page read before. Any other sign that the list goes on (pagination.partial_sign, or an object where the
        array is expected) is a NacResponseError naming it: a list is used whole, or not at all.

        The whole list, all its pages together, is bounded: at most ``max_list_items`` items and ``max_list_mb``
        MiB of replies (each page read with what is left of it as its limit), else a NacResponseError naming the
        option. Between two pages, ``should_stop`` is asked: a reason stops the listing (NacError)."""
        seen, pages_read, size = set(), 0, 0
        budget = self.client.max_list_mb * MIB
        while True:
            seen.add(path)
            left = "max_list_mb allows %d MiB for the whole list, %s" % (
                self.client.max_list_mb,
                "%d bytes of which were read in %d pages before" % (size, pages_read)
                if pages_read
                else "its pages together",
            )
            page = self.client.request("GET", path, decoder=decoder, limit=(budget - size, left))
            pages_read += 1
            if not isinstance(page, Page):
                raise self._not_a_list(path, page)
            size += page.size
            if len(records) + len(page) > self.client.max_list_items:
                raise self._partial(
                    path,
                    "the list has more than %d items (max_list_items) after %d pages: if the service really lists "
                    "that many, raise max_list_items (or NAC_MAX_LIST_ITEMS)"
                    % (self.client.max_list_items, pages_read),
                )
            following = self._next_page(path, page, seen, pages_read)
            shift = records.add(page, pages_read, page.headers, following is None)
            if shift:
                return shift
            reason = (
                self.client.should_stop() if following is not None and self.client.should_stop is not None else None
            )
            if reason:
                raise self.client.scrubbed(
                    NacError(
                        "GET %s: stopped listing after %d pages: %s" % (path, pages_read, reason),
                        method="GET",
                        path=path,
                        url=self.client.display_url,
                    )
                )
            if following is None:
                sign = partial_sign(page.headers, len(records), pages_read, noun)
                if sign:
                    raise self._partial(path, "%s, but listed %d and gave no next link" % (sign, len(records)))
                return None
            path = following

    def _next_page(self, path, page, seen, pages_read):
        """The path of the page after ``page`` (read from ``path``), None after the last one."""
        try:
            links = next_links(page.headers, page.url)
        except LinkError as error:
            quoted = excerpt(page.headers.get("Link"), 120, self.client.secrets)
            raise self._partial(path, "the reply's Link header cannot be read (%s: %s)" % (error, quoted)) from None
        if not links:
            return None
        if len(links) > 1:
            quoted = ", ".join(strip_userinfo(link) for link in links)
            raise self._partial(path, "the reply's Link header names %d next pages: %s" % (len(links), quoted))
        following = path_under(links[0], self.client.base_url)
        if following is None:
            raise self._partial(
                path,
                "the next page is at %s, on another origin (scheme, host, port) or outside api_url %s: not followed, "
                "so that no credential is sent there" % (strip_userinfo(links[0]), self.client.display_url),
            )
        if following in seen:
            raise self._partial(path, "the next link leads back to %s, a page already read (a loop)" % following)
        if pages_read >= MAX_PAGES:
            raise self._partial(
                path, "the reply still names a next page after %d pages, the most read of one list" % pages_read
            )
        return following

    def _not_a_list(self, path, reply):
        what = "expected a JSON array, got %s" % json_type(reply)
        keys = envelope_keys(reply)
        if keys:  # {"items": [...], "next": ...}: maybe one page of a list, maybe the whole of it: never guessed
            what += " with %s, the shape of a page of a paginated list: not read as the list" % ", ".join(
                repr(key) for key in keys
            )
        return shape_error(self.client, "GET", path, what)

    def _partial(self, path, what):
        return self.client.scrubbed(
            NacResponseError(
                "GET %s: %s: refusing to use an incomplete list (see 'Pagination and reply sizes' in the API guide)"
                % (path, what),
                method="GET",
                path=path,
                url=self.client.display_url,
            )
        )
