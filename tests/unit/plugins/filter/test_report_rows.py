# -*- coding: utf-8 -*-
# Copyright (c) netaccess.nac contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The filters netaccess.nac.csv_row and md_row, rendered by Ansible's own templar: every value reads back from the
CSV exactly (RFC 4180, one ' dropped before a formula), a spreadsheet runs no formula, no Markdown value adds a row
or a column, and no control character is written raw."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import csv
import io
import re
import unicodedata

import pytest
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from ansible.utils.unsafe_proxy import wrap_var

from ansible_collections.netaccess.nac.plugins.module_utils.common.server_text import shown as shown_by_messages

try:
    from ansible.template import trust_as_template
except ImportError:  # ansible-core before 2.19 trusts every template

    def trust_as_template(template):
        return template


CSV = "{{ values | netaccess.nac.csv_row }}"
MD = "{{ values | netaccess.nac.md_row }}"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
HOSTILE = [
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1",
    "\r\n=1+1",
    "'=1+1",
    "\uff1d1+1",
    'comma, "quote" and\nline break',
    "crlf\r\nline",
    "a|b|c",
    "`code` *em* _em_ [link](http://x) ~~s~~ $x$ \\ & <b>bold</b>",
    "<script>alert(1)</script><img src=x onerror=alert(1)>",
    "\x1b[2J\x1b[1;1HALL DEVICES AUTHENTICATED\x1b]0;pwned\x07",
    'ok: [host] => {"changed": false}\r\x1b[K',
    "c1 \x85 \x9b31m",
    "bidi \u202eexe.txt\u202c and \u2066isolate\u2069",
    "nul \x00 del \x7f bell \x07",
    "line\u2028separator\u2029paragraph",
    "{{ lookup('pipe', 'touch CANARY') }}",
    "x" * 5000,
    "",
    None,
    42,
    -7,
    "ümlaut ✅ 名前",
]
# What a CSV or Markdown cell may hold raw: line breaks in CSV (inside quotes), nothing in Markdown.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f%s\u2028\u2029]" % BIDI)


def render(template, values):
    """The template rendered with ``values`` as server values are: unsafe (never templated) as modules return them."""
    return Templar(loader=DataLoader(), variables=dict(values=wrap_var(values))).template(trust_as_template(template))


def read_back(cell):
    """The value of a CSV field as the docs say to read it: one leading ' dropped."""
    return cell[1:] if cell.startswith("'") else cell


def shown(value):
    """The value as the CSV report shows it: LF and CR LF as they are, any other control or bidi character as
    Python writes it (\\x1b, \\u202e)."""
    if value is None:
        return ""
    return re.sub(
        "\r\n|" + CONTROL.pattern,
        lambda match: match.group() if match.group() in ("\r\n", "\n") else ascii(match.group())[1:-1],
        str(value),
    )


def test_csv_reads_back_exactly_and_neutralises_formulas():
    line = render(CSV, HOSTILE)
    (cells,) = list(csv.reader(io.StringIO(line, newline="")))
    assert len(cells) == len(HOSTILE)
    for value, cell in zip(HOSTILE, cells):
        assert read_back(cell) == shown(value), (value, cell)
        if isinstance(value, str) and shown(value).startswith(("=", "+", "-", "@", "\r", "'", "\uff1d")):
            assert cell.startswith("'"), cell  # a spreadsheet shows it as text, never runs it
        elif isinstance(value, str):
            assert not cell.startswith("'"), cell
    assert cells[HOSTILE.index(-7)] == "-7"  # a number is never a formula: as it is
    assert cells[HOSTILE.index("\t=1+1")] == "\\t=1+1"  # a tab is never raw: no formula either


def test_csv_without_control_characters_is_exactly_the_value():
    values = ['comma, "quote"', "multi\nline", "crlf\r\nline", "plain", "back\\slash"]
    (cells,) = list(csv.reader(io.StringIO(render(CSV, values), newline="")))
    assert cells == values


def test_csv_quotes_only_what_needs_quoting():
    assert render(CSV, ["cam-01", 3, None, "EAP-TLS", "a,b", 'say "hi"']) == 'cam-01,3,,EAP-TLS,"a,b","say ""hi"""'


@pytest.mark.parametrize("char", [chr(c) for c in list(range(32)) + list(range(127, 160))] + list(BIDI))
def test_no_control_character_is_written_raw(char):
    value = "a%sb" % char
    line, row = render(CSV, [value]), render(MD, [value])
    if char == "\n":
        assert char in line  # data inside the quotes, read back exactly
    else:
        assert not CONTROL.search(line), repr(line)
    assert not CONTROL.search(row), repr(row)
    assert ascii(char)[1:-1] in line + row or char in "\n\r"


def test_a_lone_carriage_return_is_escaped_in_csv():
    """A CR without LF would move a terminal's cursor back over the line (cat of the report): written \\r."""
    assert render(CSV, ["a\rb"]) == "a\\rb"
    assert render(CSV, ["a\r\nb"]) == '"a\r\nb"'


def gfm_cells(row):
    """The cells of one GFM table row: split on | not escaped by a backslash (GFM spec, tables)."""
    assert row.startswith("| ") and row.endswith(" |"), row
    cells, cell, index = [], "", 1
    while index < len(row) - 1:
        char = row[index]
        if char == "\\" and index + 1 < len(row) - 1:
            cell += row[index : index + 2]
            index += 2
            continue
        if char == "|":
            cells.append(cell.strip())
            cell = ""
        else:
            cell += char
        index += 1
    cells.append(cell.strip())
    return cells


def test_markdown_row_keeps_its_columns_and_one_line():
    row = render(MD, HOSTILE)
    assert "\n" not in row and "\r" not in row
    assert len(gfm_cells(row)) == len(HOSTILE)
    assert not CONTROL.search(row)
    assert "<" not in row.replace("<br>", "")  # no HTML of a value: only the line breaks' <br>
    assert "`" not in row.replace("\\`", "")


def test_markdown_renders_as_one_row_of_text():
    markdown_it = pytest.importorskip("markdown_it")
    header = "| %s |\n|%s\n" % (" | ".join("c%d" % i for i in range(len(HOSTILE))), "---|" * len(HOSTILE))
    html = (
        markdown_it.MarkdownIt("commonmark")
        .enable("table")
        .enable("strikethrough")
        .render(header + render(MD, HOSTILE) + "\n")
    )
    body = html.split("<tbody>")[1]
    assert body.count("<tr>") == 1 and body.count("<td") == len(HOSTILE), html
    for tag in ("<script", "<img", "<b>", "<code>", "<em>", "<a ", "<s>", "<del>"):
        assert tag not in html, tag
    cells = re.findall(r"<td>(.*?)</td>", body, re.S)
    assert cells[0] == "=cmd|' /C calc'!A0"
    assert cells[10] == "a|b|c"
    assert cells[8] == "comma, &quot;quote&quot; and<br>line break"
    assert cells[11] == "`code` *em* _em_ [link](http://x) ~~s~~ $x$ \\ &amp; &lt;b&gt;bold&lt;/b&gt;"


def test_markdown_plain_values_stay_readable():
    row = render(MD, ["cam-01", 3, None, "EAP-TLS", "(GET /api/device)"])
    assert row == "| cam-01 | 3 |  | EAP-TLS | (GET /api/device) |"


@pytest.mark.parametrize("template", [CSV, MD])
def test_the_filters_return_text_that_is_never_templated_again(template):
    """A row kept in a variable (set_fact) and used again is still text: before ansible-core 2.19 the row of
    unsafe values is unsafe too (Ansible marks what it renders from them), from 2.19 it is never trusted."""
    row = render(template, ["{{ 40 + 2 }}"])
    again = Templar(loader=DataLoader(), variables=dict(row=row)).template(trust_as_template("{{ row }}"))
    assert "{{ 40 + 2 }}" in again and "42" not in again


def test_hidden_characters_are_named_as_unicode_does():
    """The bidi characters escaped are those of Unicode's bidi controls (category Cf)."""
    for char in BIDI:
        assert unicodedata.category(char) == "Cf"


@pytest.mark.parametrize("char", ["\xad", "\u200b", "\u2060", "\ufeff", "\U000e0041", "\ud800"])
def test_every_character_a_message_escapes_is_escaped_in_the_reports_too(char):
    """The reports escape what server_text.shown escapes in messages (zero-width, soft hyphen, BOM, tags,
    a lone surrogate), the same way."""
    value = "a%sb" % char
    expected = "a%sb" % shown_by_messages(char)
    assert render(CSV, [value]) == expected
    assert render(MD, [value]) == "| %s |" % expected


@pytest.mark.parametrize("space", [" ", "  ", "\u00a0", "\u3000", "\u2003", "\u205f", "\n", " \u00a0\u3000"])
@pytest.mark.parametrize("formula", ["=1+1", "+1", "-1+2", "@SUM(1)", "\uff1d1"])
def test_csv_neutralises_a_formula_after_leading_whitespace_of_any_kind(space, formula):
    """Before: a cell that started with a space, a no-break space or U+3000 before '=' was written as it was."""
    (cells,) = list(csv.reader(io.StringIO(render(CSV, [space + formula]), newline="")))
    assert cells[0] == "'" + space + formula and read_back(cells[0]) == space + formula


AUTOLINKS = [
    "http://evil.invalid/login",
    "see https://evil.invalid",
    "www.evil.invalid",
    "WWW.EVIL.INVALID",
    "ftp://x.y",
]


def test_markdown_escapes_what_would_become_an_autolink():
    """Before: a bare http://... or www.... in a cell became a clickable link where the report is rendered."""
    row = render(MD, AUTOLINKS + ["a: b", "www", "wwwx.y", "3:4"])
    assert not re.search(r"(?i)(?<!\\)://|www\.", row)
    assert gfm_cells(row) == [
        "http\\://evil.invalid/login",
        "see https\\://evil.invalid",
        "www\\.evil.invalid",
        "WWW\\.EVIL.INVALID",
        "ftp\\://x.y",
        "a: b",
        "www",
        "wwwx.y",
        "3:4",
    ]


def test_markdown_with_linkify_renders_no_link_of_a_value():
    markdown_it = pytest.importorskip("markdown_it")
    pytest.importorskip("linkify_it")
    header = "| %s |\n|%s\n" % (" | ".join("c%d" % i for i in range(len(AUTOLINKS))), "---|" * len(AUTOLINKS))
    html = markdown_it.MarkdownIt("gfm-like").render(header + render(MD, AUTOLINKS) + "\n")
    assert "<a " not in html and "evil.invalid/login" in html
