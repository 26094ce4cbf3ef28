"""Markdown → Telegram HTML (channels/telegram/html.py), checked against the stub's Telegram HTML rules."""

from __future__ import annotations

from html import unescape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from channels.telegram.html import DraftRenderer, markdown_to_html
from localservers.telegram_server import check_html


@pytest.mark.parametrize(
    ("markdown", "html"),
    [
        ("plain words", "plain words"),
        ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
        ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
        ("*italic* and _italic_", "<i>italic</i> and <i>italic</i>"),
        ("***both***", "<i><b>both</b></i>"),
        ("~~gone~~", "<s>gone</s>"),
        ("use `x<y>` here", "use <code>x&lt;y&gt;</code> here"),
        ("``a `tick` b``", "<code>a `tick` b</code>"),
        ('[docs](https://e.com/?a=1&b="2")', '<a href="https://e.com/?a=1&amp;b=%222%22">docs</a>'),
        ("[wiki](https://en.wikipedia.org/wiki/Python_(language))", None),
        ("[mail](mailto:a@b.c) and <https://auto.link/x>", None),
        ("![a cat](https://e.com/cat.png)", '<a href="https://e.com/cat.png">a cat</a>'),
        ("<b>raw html</b> stays text", "&lt;b&gt;raw html&lt;/b&gt; stays text"),
        ("> a quote with **bold**", "<blockquote>a quote with <b>bold</b></blockquote>"),
        ("> outer\n> > inner", "<blockquote>outer\ninner</blockquote>"),  # Telegram: no nesting
        ("1. first\n2. second", "1. first\n2. second"),
        ("3) third\n4) fourth", "3. third\n4. fourth"),
        ("- a\n  - nested\n- b", "• a\n  • nested\n• b"),
        ("1. step\n   - detail", "1. step\n   • detail"),
        ("---", "——————"),
        ("[bad](javascript:alert(1))", "[bad](javascript:alert(1))"),
        ("# Title", "<b>Title</b>"),
        ("### A *small* heading ###", "<b>A <i>small</i> heading</b>"),
        ("- one\n* two", "• one\n• two"),
        ("snake_case_name and 2 * 3 * 4", "snake_case_name and 2 * 3 * 4"),
        ("**bold with `code`**", "<b>bold with code</b>"),  # Telegram forbids code inside other entities
        ("**unclosed and <tag>", "**unclosed and &lt;tag&gt;"),
    ],
)
def test_inline_markdown(markdown: str, html: str | None) -> None:
    rendered = markdown_to_html(markdown)
    if html is not None:
        assert rendered == html
    assert check_html(rendered)[1] == ""


def test_links_with_parentheses_keep_the_whole_url() -> None:
    html = markdown_to_html("[wiki](https://en.wikipedia.org/wiki/Python_(language)) done")
    assert html == '<a href="https://en.wikipedia.org/wiki/Python_(language)">wiki</a> done'
    assert (
        markdown_to_html("<https://auto.link/x>") == '<a href="https://auto.link/x">https://auto.link/x</a>'
    )


def test_a_table_becomes_aligned_preformatted_text() -> None:
    markdown = "Prices:\n\n| item | 价格 |\n| --- | ---: |\n| **tea** | 3 |\n| 咖啡 | `12` |\n\nThat's all."
    html = markdown_to_html(markdown)
    assert html == ("Prices:\n\n<pre>item | 价格\n-----+-----\ntea  | 3\n咖啡 | 12</pre>\n\nThat's all.")
    assert check_html(html)[1] == ""


def test_a_quote_holding_a_list_and_code() -> None:
    html = markdown_to_html("> - one\n> - `two`\n>\n> ```\n> x < y\n> ```")
    assert html == "<blockquote>• one\n• <code>two</code>\n\n<pre><code>x &lt; y</code></pre></blockquote>"
    assert check_html(html)[1] == ""


def test_blank_lines_between_blocks_are_kept_as_written() -> None:
    assert markdown_to_html("one\n\ntwo") == "one\n\ntwo"
    assert markdown_to_html("one\ntwo") == "one\ntwo"
    assert markdown_to_html("# Head\nbody") == "<b>Head</b>\nbody"


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
    assert check_html("<code><b>x</b></code>")[1]
    assert check_html("<pre><b>x</b></pre>")[1]
    assert check_html("<blockquote><blockquote>x</blockquote></blockquote>")[1]
    assert check_html("<a>no href</a>")[1]
    assert check_html('<b onclick="x">y</b>')[1]
    assert check_html("<b>open")[1]
    assert check_html("<div>x</div>")[1]
    assert check_html("a < b")[1]
    assert check_html("&nbsp;")[1]
    assert check_html("<b>ok</b> &amp; fine") == ("ok & fine", "")


MARKDOWN_PIECES = [
    *"ab *_`~#-[]()<>&\"'\n:/.|!\\+=1",
    "https://x.y",
    "```py\n",
    "**",
    "> ",
    "1. ",
    "    ",
    "| a | b |\n|---|---|\n",
    "<https://x.y/(z)>",
    "&amp;",
    "&nbsp;",
    "![i](http://x)",
    "[l](tg://user?id=1)",
    "中文",
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(MARKDOWN_PIECES)))
def test_any_text_renders_to_html_telegram_accepts(tokens: list[str]) -> None:
    text = "".join(tokens)
    html = markdown_to_html(text)
    _visible, error = check_html(html)
    assert error == "", (text, html)


WORD = st.text(
    alphabet=st.characters(
        categories=("L", "N", "Po", "Ps", "Pe", "Sm", "Sc"),
        exclude_characters="*_`~#-[]+>|\\&<!=.)",
    ),
    min_size=1,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(WORD, st.sampled_from([" ", "\n"])), min_size=1))
def test_text_without_markup_only_gets_escaped(words: list[tuple[str, str]]) -> None:
    text = "".join(word + gap for word, gap in words).strip()
    assert unescape(markdown_to_html(text)) == text


BLOCK_PIECES = [
    *MARKDOWN_PIECES,
    "\n\n",
    "\n\n",
    "\n\n",
    "```\n",
    "~~~~\n",
    "[r]: https://x.y\n",
    "[a][r]",
    "# ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(BLOCK_PIECES), max_size=40), st.integers(min_value=1, max_value=7))
def test_a_draft_rendered_as_it_grows_equals_the_whole_rendering(tokens: list[str], step: int) -> None:
    """Each frame of a streamed draft reuses what earlier frames rendered (DraftRenderer) and must show
    exactly what rendering the frame whole shows."""
    text = "".join(tokens)
    drafts = DraftRenderer()
    for end in [*range(step, len(text), step), len(text)]:
        assert drafts.render(text[:end]) == markdown_to_html(text[:end]), text[:end]


def test_a_draft_that_does_not_continue_the_last_starts_afresh() -> None:
    drafts = DraftRenderer()
    assert drafts.render("first **part**\n\nsecond") == "first <b>part</b>\n\nsecond"
    assert drafts.render("other\n\n- a\n\n- b") == markdown_to_html("other\n\n- a\n\n- b")
