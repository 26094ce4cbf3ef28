"""Markdown → Telegram HTML (channels/telegram_format.py), checked against the stub's Telegram HTML rules."""

from __future__ import annotations

from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channels.telegram_format import markdown_to_html
from localservers.telegram_api import check_html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("plain words", "plain words"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*italic* and _italic_", "<i>italic</i> and <i>italic</i>"),
        ("***both***", "<b><i>both</i></b>"),
        ("~~gone~~", "<s>gone</s>"),
        ("use `x<y>` here", "use <code>x&lt;y&gt;</code> here"),
        ("``a `tick` b``", "<code>a `tick` b</code>"),
        ('[docs](https://e.com/?a=1&b="2")', '<a href="https://e.com/?a=1&amp;b=&quot;2&quot;">docs</a>'),
        ("[bad](javascript:alert(1))", "[bad](javascript:alert(1))"),
        ("# Title", "<b>Title</b>"),
        ("### A *small* heading ###", "<b>A <i>small</i> heading</b>"),
        ("- one\n* two", "• one\n• two"),
        ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
        ("**bold with `code`**", "<b>bold with code</b>"),  # Telegram forbids code inside other entities
        ("**unclosed and <tag>", "**unclosed and &lt;tag&gt;"),
    ],
)
def test_inline_markdown(markdown: str, html: str) -> None:
    assert markdown_to_html(markdown) == html
    assert check_html(html)[1] == ""


def test_fenced_code_becomes_pre_with_the_language_and_is_escaped() -> None:
    markdown = "Try:\n```python\nif a < b and **c**:\n    print('<&>')\n```\ndone"
    html = markdown_to_html(markdown)
    assert html == (
        'Try:\n<pre><code class="language-python">if a &lt; b and **c**:\n'
        "    print('&lt;&amp;&gt;')</code></pre>\ndone"
    )
    assert check_html(html)[1] == ""


def test_a_fence_closes_only_with_at_least_as_many_of_its_characters() -> None:
    markdown = "````markdown\nExample:\n```python\nx = 1\n```\n````\nafter"
    html = markdown_to_html(markdown)
    assert html == (
        '<pre><code class="language-markdown">Example:\n```python\nx = 1\n```</code></pre>\nafter'
    )
    assert markdown_to_html("~~~\n```\nstill code\n~~~~~") == "<pre><code>```\nstill code</code></pre>"
    assert markdown_to_html("```\na\n```` \nb") == "<pre><code>a</code></pre>\nb"  # longer closes too
    assert check_html(html)[1] == ""


def test_a_fence_without_language_or_end() -> None:
    assert markdown_to_html("```\n<x>") == "<pre><code>&lt;x&gt;</code></pre>"


def test_the_stub_rejects_what_telegram_rejects() -> None:
    assert check_html("<b>open")[1]
    assert check_html("<div>x</div>")[1]
    assert check_html("a < b")[1]
    assert check_html("&nbsp;")[1]
    assert check_html("<b>ok</b> &amp; fine") == ("ok & fine", "")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*"ab *_`~#-[]()<>&\"'\n:/.", "https://x.y", "```py\n", "**"])))
def test_any_text_renders_to_html_telegram_accepts(tokens: list[str]) -> None:
    text = "".join(tokens)
    html = markdown_to_html(text)
    _visible, error = check_html(html)
    assert error == "", (text, html)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="*_`~#-[+")))
def test_text_without_markup_only_gets_escaped(text: str) -> None:
    assert unescape(markdown_to_html(text)) == text
