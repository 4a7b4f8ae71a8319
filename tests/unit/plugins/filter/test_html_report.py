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
from html.parser import HTMLParser

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar

from ansible_collections.netaccess.nac.plugins.plugin_utils.html_report import POLICY, visible

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
        "table thead tr th tbody td input label footer script".split()
    )
    assert [tag for tag, _attrs in page.elements].count("script") == 1
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
    rows = [attrs for tag, attrs in page.elements if tag == "tr" and "data-status" in attrs]
    assert [(r["class"], r["data-status"]) for r in rows] == [
        ("yes", "AUTHENTICATED"),
        ("yes", "authenticated"),
        ("yes", "UNAUTHENTICATED"),
        ("no", "CONNECTING"),
        ("no", "ERROR"),
    ]
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
        ("cam-01", {}, "html_report: expects a list of devices, got a string"),
        ([["cam-01"]], {}, "html_report: device 1 is not a mapping"),
        ({"id": 1}, {}, "html_report: expects a list of devices, got a mapping"),
        ([], {"created": "cam-01"}, "html_report: created must be a list of hostnames, got a string"),
    ],
)
def test_bad_input_is_named(results, options, message):
    with pytest.raises(AnsibleError, match=re.escape(message)):
        render(results, **options)
