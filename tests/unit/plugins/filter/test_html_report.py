# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filter netaccess.nac.html_report, rendered by Ansible's own templar: the page's structure parsed back
(html.parser), hostile values in every field shown as text and never as markup or raw control characters, the
Content-Security-Policy hashes of its own style and script, the chart's counts, what was created, what did not
authenticate. The page in a browser: the integration target html_report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import hashlib
import re
from collections.abc import Mapping
from html.parser import HTMLParser

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import POLICY, record, visible

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template, and every variable that is not unsafe
    from ansible.utils.unsafe_proxy import wrap_var as untrusted

    def trust_as_template(template):
        return template

else:  # since 2.19 a variable is never a template unless trusted

    def untrusted(value):
        return value


HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(2)>',
    "'><svg/onload=alert(3)>",
    "{{ lookup('pipe', 'id') }}",
    "{% raw %}",
    "\x1b[31mred\x00\x07\x7f\x9b",
    "\u202eevil\u202c\u2066\u2069\u200b\ufeff",
    "line\u2028para\u2029",
    "</style></title></textarea>-->",
    "&amp; &lt;",
]
KEYS = ["hostname", "expected_status", "status", "auth_method", "username", "message"]


def render(results, **options):
    """The page, made by the filter through Ansible's templar."""
    arguments = "".join(", %s=%s" % (name, name) for name in options)
    # As registered results are: the NAC's values are data, never templates.
    templar = Templar(loader=DataLoader(), variables=untrusted(dict(results=results, **options)))
    return templar.template(trust_as_template("{{ results | netaccess.nac.html_report(%s) }}" % arguments[2:]))


class Page(HTMLParser):
    """Every element (tag, attributes), and the text of each element with an id or a class, as parsed."""

    def __init__(self, source):
        HTMLParser.__init__(self, convert_charrefs=True)
        self.elements, self.texts, self.stack = [], [], []
        self.feed(source)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag not in ("meta", "input", "rect", "br"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack.pop() != tag:
                pass

    def handle_data(self, data):
        self.texts.append((tuple(self.stack), data))

    def cells(self):
        """The text of the table cells, in order."""
        return [data for stack, data in self.texts if stack[-2:] == ("tr", "td")]


def device(number, value, status=None):
    result = dict((key, value) for key in KEYS)
    result.update(id=number, expected_status="AUTHENTICATED", status=status or value)
    return result


def test_hostile_values_are_text_in_every_field():
    results = [device(n, value) for n, value in enumerate(HOSTILE, 1)]
    source = render(results, nac="https://nac.example.com", created=HOSTILE, existing=1, title=HOSTILE[0])
    page = Page(source)
    tags = sorted(set(tag for tag, _attrs in page.elements))
    assert tags == sorted(
        "html head meta title style body header h1 p span time main section div b h2 button svg rect ul li "
        "table thead tr th tbody td input label select option footer script".split()
    )
    scripts = [attrs for tag, attrs in page.elements if tag == "script"]
    assert scripts == [{"type": "application/json", "id": "report-data"}, {}]
    block = source.split('<script type="application/json" id="report-data">', 1)[1].split("</script>", 1)[0]
    assert not re.search("[^ -~]|[<>&{}]", block)  # printable ASCII only, nothing of markup or templates
    assert not [(tag, name) for tag, attrs in page.elements for name in attrs if name.lower().startswith("on")]
    # No control, bidi or invisible character is written raw, and no template: braces are character references.
    assert not [char for char in source if char not in "\n" and not char.isprintable() and char != " "]
    body = source.split("</style>", 1)[1].split("<script>", 1)[0]
    assert "{{" not in body and "{%" not in body and "{" not in body
    # Each value comes back as exactly its visible form, in every column of its row.
    cells = page.cells()
    for number, value in enumerate(HOSTILE, 1):
        shown = visible(value)
        assert cells.count(shown) >= 5, (value, shown)
        assert "\u2717" in cells and str(number) in cells
    assert visible(HOSTILE[5]) == "\\x1b[31mred\\x00\\x07\\x7f\\x9b"
    assert visible(HOSTILE[6]) == "\\u202eevil\\u202c\\u2066\\u2069\\u200b\\ufeff"
    assert visible(HOSTILE[7]) == "line\\u2028para\\u2029"
    assert visible("a\tb\r\nc") == "a b  c"


def test_the_policy_allows_exactly_its_own_style_and_script():
    source = render([device(1, "cam-01", "AUTHENTICATED")])
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', source).group(1)
    assert meta == POLICY
    style = source.split("<style>", 1)[1].split("</style>", 1)[0]
    script = source.split("<script>", 1)[1].split("</script>", 1)[0]
    digest = dict(
        (name, base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii"))
        for name, text in (("style", style), ("script", script))
    )
    assert POLICY == (
        "default-src 'none'; style-src 'sha256-%s'; script-src 'sha256-%s'; img-src 'none'; base-uri 'none'; "
        "form-action 'none'" % (digest["style"], digest["script"])
    )
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "document.write" not in script


def test_counts_created_missed_and_header():
    results = [
        dict(id=1, hostname="cam-01", expected_status="AUTHENTICATED", status="AUTHENTICATED", auth_method="EAP-TLS"),
        dict(id=2, hostname="cam-02", expected_status="AUTHENTICATED", status="authenticated"),
        dict(id=3, hostname="prn-01", expected_status="UNAUTHENTICATED", status="UNAUTHENTICATED", message="No MAC"),
        dict(id=4, hostname="cam-03", expected_status="AUTHENTICATED", status="CONNECTING", message="In progress"),
        dict(id=None, hostname="gone-01", expected_status="AUTHENTICATED", status="ERROR", error="not in the list"),
    ]
    page = Page(
        render(results, nac="https://user:secret@nac.example.com/", created=["cam-03"], existing=4, generated_at="T")
    )
    bars = [attrs["data-status"] for tag, attrs in page.elements if tag == "button" and "data-status" in attrs]
    assert bars == ["AUTHENTICATED", "CONNECTING", "ERROR", "UNAUTHENTICATED", "authenticated"]
    counts = [int(data) for stack, data in page.texts if stack[-2:] == ("button", "span") and data.isdigit()]
    assert counts == [1, 1, 1, 1, 1]
    rows = [attrs["class"] for tag, attrs in page.elements if tag == "tr" and "class" in attrs]
    # The table of those not at their expected status (CONNECTING in progress, the error failed), then all.
    assert rows == ["wait", "no", "yes", "yes", "yes", "wait", "no"]
    texts = [data for _stack, data in page.texts]
    assert "Not at their expected status (2)" in texts and "Created by this run (1)" in texts
    assert "4 already existed." in texts and "not in the list" in texts and "In progress" in texts
    # The NAC's address without the user:password@ of a mistaken URL.
    assert "https://nac.example.com/" in texts and not [t for t in texts if "secret" in t]
    assert "T" in texts


def test_a_run_that_creates_nothing_has_no_such_section_and_an_empty_one_says_none():
    assert 'id="created"' not in render([])
    page = render([], created=[])
    assert "Created by this run (0)" in page and "None." in page and "No devices." in page


@pytest.mark.parametrize(
    "results, options, message",
    [
        (
            "cam-01",
            {},
            (
                "html_report: expects a list of devices or the path of a file of results (nac_dot1x_status's dest): "
                "cam-01 cannot be read: No such file"
            ),
        ),
        ([["cam-01"]], {}, "html_report: device 1 is not a mapping"),
        ({"id": 1}, {}, "html_report: expects a list of devices, got a mapping"),
        ([], {"created": "cam-01"}, "html_report: created must be a list of hostnames, got a string"),
    ],
)
def test_bad_input_is_named(results, options, message):
    with pytest.raises(AnsibleError, match=re.escape(message)):
        render(results, **options)


def result(number, status, expected="AUTHENTICATED", **more):
    return dict(dict(id=number, hostname="dev-%02d" % number, expected_status=expected, status=status), **more)


def verdict(source):
    return re.search(r'<p id="verdict" class="(\w+)">([^<]*)</p>', source).groups()


@pytest.mark.parametrize(
    "statuses, wanted",
    [
        (["AUTHENTICATED", "authenticated"], ("passed", "PASSED: all 2 at their expected status")),
        ([], ("passed", "PASSED: no devices to check")),
        (
            ["AUTHENTICATED", "CONNECTING", "pending"],
            ("incomplete", "INCOMPLETE: 2 of 3 still in progress, none failed"),
        ),
        (
            ["AUTHENTICATED", "CONNECTING", "UNAUTHENTICATED", "UNKNOWN"],
            ("failed", "FAILED: 3 of 4 not at their expected status (2 failed, 1 still in progress)"),
        ),
        (["UNAUTHENTICATED"], ("failed", "FAILED: 1 of 1 not at their expected status")),
    ],
)
def test_the_verdict_keeps_devices_in_progress_apart_from_failures(statuses, wanted):
    assert verdict(render([result(n, status) for n, status in enumerate(statuses, 1)])) == wanted


def test_in_progress_is_a_choice_and_an_error_is_never_in_progress():
    results = [result(1, "WARMING_UP"), result(2, "CONNECTING", error="timed out")]
    assert verdict(render(results)) == ("failed", "FAILED: 2 of 2 not at their expected status")
    assert verdict(render(results, in_progress=["warming_up"])) == (
        "failed",
        "FAILED: 2 of 2 not at their expected status (1 failed, 1 still in progress)",
    )
    with pytest.raises(AnsibleError, match="in_progress must be a list of statuses, got a string"):
        render(results, in_progress="CONNECTING")


def test_the_device_lists_fields_by_id_else_by_hostname():
    results = [result(1, "AUTHENTICATED"), dict(result(2, "AUTHENTICATED"), id=None, hostname="Cam-B")]
    devices = [
        dict(id=1, hostname="dev-01", group={"name": "<b>Cams</b>"}, profile="Camera", macs=["aa", "bb"]),
        dict(id=7, hostname="cam-b", group="Printers", ips=["10.0.0.1"], profile=["not", "a", "name"]),
    ]
    page = Page(render(results, devices=devices))
    heads = [data for stack, data in page.texts if stack[-2:] == ("th", "button")]
    assert heads[-4:] == ["Group", "Profile", "MACs", "IPs"]
    cells = page.cells()
    assert cells[-14:] == [
        "\u2713", "dev-01", "1", "AUTHENTICATED", "AUTHENTICATED", "<b>Cams</b>", "Camera", "aa, bb",
        "\u2713", "Cam-B", "AUTHENTICATED", "AUTHENTICATED", "Printers", "10.0.0.1",
    ]  # fmt: skip
    assert "Group" not in render([result(1, "AUTHENTICATED")], devices=[dict(id=1, hostname="dev-01")])
    with pytest.raises(AnsibleError, match="html_report: devices: item 1 is not a mapping"):
        render(results, devices=["dev-01"])


class HostVars(Mapping):
    """A host's variables as hostvars gives them to a filter: a mapping that is not a dict."""

    def __init__(self, **variables):
        self.variables = variables

    def __getitem__(self, name):
        return self.variables[name]

    def __iter__(self):
        return iter(self.variables)

    def __len__(self):
        return len(self.variables)


def test_the_devices_may_be_the_inventorys_host_variables():
    results = [result(1, "AUTHENTICATED"), dict(result(2, "AUTHENTICATED"), id=None, hostname="Cam-B")]
    devices = [
        HostVars(nac_id=1, nac_hostname="dev-01", nac_group="<b>Cams</b>", nac_macs=["aa"], ansible_host="x"),
        HostVars(nac_id=7, nac_hostname="cam-b", nac_profile="Printer", nac_ips=["10.0.0.1"], nac_record={}),
    ]
    cells = Page(render(results, devices=devices)).cells()
    assert cells[-13:] == [
        "\u2713", "dev-01", "1", "AUTHENTICATED", "AUTHENTICATED", "<b>Cams</b>", "aa",
        "\u2713", "Cam-B", "AUTHENTICATED", "AUTHENTICATED", "Printer", "10.0.0.1",
    ]  # fmt: skip


def test_context_and_the_csv_link_are_text():
    source = render(
        [],
        context={"AWX job": "42 {{ x }}", "Play": "<i>p</i>", "Empty": ""},
        csv='../a "b"<x>.csv',
    )
    page = Page(source)
    assert [data for stack, data in page.texts if stack[-1:] in (("dt",), ("dd",))] == [
        "AWX job", "42 {{ x }}", "Play", "<i>p</i>", "CSV",
    ]  # fmt: skip
    links = [attrs for tag, attrs in page.elements if tag == "a"]
    assert links == [{"href": "./a%20%22b%22%3Cx%3E.csv", "download": None}]
    with pytest.raises(AnsibleError, match="context must be a mapping of labels to values, got a string"):
        render([], context="job 42")


def slurped(text):
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def test_what_changed_since_the_previous_report():
    before = [result(1, "AUTHENTICATED"), result(2, "CONNECTING"), result(3, "UNAUTHENTICATED"), result(4, "X")]
    before.append(dict(result(5, "AUTHENTICATED"), hostname="gone-\u202e{{x}}"))
    text = record(before, generated_at="yesterday")
    assert "{" not in text and "}" not in text and not re.search("[^ -~\n]", text)
    now = [result(1, "UNAUTHENTICATED"), result(2, "AUTHENTICATED"), result(3, "AUTHENTICATED"), result(4, "Y")]
    now.append(result(6, "AUTHENTICATED"))
    source = render(now, previous=slurped(text))
    page = Page(source)
    kinds = [(attrs["data-change"]) for tag, attrs in page.elements if tag == "button" and "data-change" in attrs]
    counts = [data for stack, data in page.texts if stack[-2:] == ("button", "b")]
    assert list(zip(kinds, counts)) == [("newly failing", "1"), ("recovered", "2"), ("new", "1")]
    assert "Since the previous report (" in source and "yesterday" in [d for _s, d in page.texts]
    assert [data for stack, data in page.texts if stack[-2:] == ("ul", "li")] == [visible("gone-\u202e{{x}}")]
    # Each device's change, in its row of all devices (the last column).
    devices = source.split('<table id="devices"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<tr class="\w+">(.*?)</tr>', devices)
    assert [re.findall(r"<td[^>]*>(.*?)</td>", row)[-1] for row in rows] == [
        "newly failing", "recovered", "recovered", "", "new",
    ]  # fmt: skip


@pytest.mark.parametrize(
    "previous, why",
    [
        ("", "no report of this name was written in this directory before"),
        ("not base64!", "not base64-encoded JSON"),
        (slurped("[1, 2]"), "it is not a record of this report (netaccess.nac.html_report/1)"),
        (slurped('["netaccess.nac.html_report/1", "t", [["id:1", "a", "lost"]]]'), "a device entry is malformed"),
    ],
)
def test_a_previous_record_that_is_not_one_is_ignored_and_said(previous, why):
    source = render([result(1, "AUTHENTICATED")], previous=previous)
    assert "Nothing to compare with: " in source and why in source and 'data-change="' not in source


def test_an_unknown_option_is_named():
    with pytest.raises(AnsibleError, match="html_report: got an unexpected keyword argument 'previus'"):
        render([], previus="")


def test_a_record_past_the_bound_of_this_report_is_refused_unread_with_a_message():
    text = record([result(i, "AUTHENTICATED") for i in range(1, 4)], generated_at="yesterday")
    bound = 1048576 + 4096 * 2
    source = render([result(1, "AUTHENTICATED"), result(2, "X")], previous=slurped(text), previous_size=bound + 1)
    assert "Nothing to compare with: " in source and "so it was not read" in source and 'data-change="' not in source
    assert (
        "%s bytes, more than the record of a report of 2 devices can be (at most %s bytes)"
        % (
            format(bound + 1, ","),
            format(bound, ","),
        )
        in source
    )
    source = render([result(1, "AUTHENTICATED"), result(2, "X")], previous=slurped(text), previous_size=bound)
    assert "Since the previous report (" in source
    padded = slurped(text + " " * bound)  # a tampered record of the right shape, past the bound: never decoded
    source = render([result(1, "AUTHENTICATED"), result(2, "X")], previous=padded)
    assert "so it was not read" in source
    with pytest.raises(AnsibleError, match="previous_size must be a number of bytes, got a string"):
        render([], previous_size="big")
