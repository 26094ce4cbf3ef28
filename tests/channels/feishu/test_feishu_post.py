"""Reply bodies (text vs Markdown post) and the plain text of a received post."""

from __future__ import annotations

import json

import pytest

from channels.feishu.post import (
    looks_like_markdown,
    post_content,
    post_media,
    post_plain_text,
    reply_body,
    text_content,
)


@pytest.mark.parametrize(
    "text",
    [
        "This is **important**.",
        "Use `pip install x`.",
        "```python\nprint(1)\n```",
        "Steps:\n- one\n- two",
        "1. first\n2. second",
        "See [the docs](https://example.com).",
        "# Title\nbody",
        "> quoted",
        "~~old~~ new",
    ],
)
def test_markdown_is_recognised(text: str) -> None:
    assert looks_like_markdown(text)
    assert reply_body(text)[0] == "post"


@pytest.mark.parametrize(
    "text",
    ["Hello there!", "2 * 3 = 6 and 4 * 5 = 20", "It costs $5 - cheap.", "你好，今天怎么样？", "a_b_c"],
)
def test_plain_text_stays_text(text: str) -> None:
    assert not looks_like_markdown(text)
    msg_type, content = reply_body(text)
    assert msg_type == "text"
    assert json.loads(content) == {"text": text}


def test_post_is_md_paragraphs_with_fences_on_their_own() -> None:
    markdown = "## Plan\nDo **this**:\n```sh\nls -la\n\necho hi\n```\nThen - done."
    content = json.loads(post_content(markdown))
    assert content == {
        "zh_cn": {
            "content": [
                [{"tag": "md", "text": "**Plan**\nDo **this**:"}],
                [{"tag": "md", "text": "```sh\nls -la\n\necho hi\n```"}],
                [{"tag": "md", "text": "Then - done."}],
            ]
        }
    }


def test_unclosed_fence_is_closed() -> None:
    content = json.loads(post_content("code:\n```\nx = 1"))
    assert content["zh_cn"]["content"][-1] == [{"tag": "md", "text": "```\nx = 1\n```"}]


def test_text_content_keeps_unicode_readable() -> None:
    assert text_content("你好") == '{"text": "你好"}'


def test_received_post_plain_text() -> None:
    post = {
        "title": "Weekly",
        "content": [
            [
                {"tag": "at", "user_id": "@_user_1", "user_name": "Bot"},
                {"tag": "text", "text": " please read "},
            ],
            [{"tag": "a", "text": "this link", "href": "https://example.com"}],
            [{"tag": "img", "image_key": "img_1"}],
            [{"tag": "code_block", "language": "PYTHON", "text": "print(1)"}],
        ],
    }
    assert post_plain_text(post) == "Weekly\n@_user_1 please read\nthis link\nprint(1)"
    assert post_media(post) == "image"


def test_received_post_in_a_locale_wrapper() -> None:
    post = {"zh_cn": {"title": "", "content": [[{"tag": "text", "text": "你好"}]]}}
    assert post_plain_text(post) == "你好"
    assert post_media(post) == ""


def test_received_post_without_words() -> None:
    post = {"title": "", "content": [[{"tag": "media", "file_key": "f", "image_key": "i"}]]}
    assert post_plain_text(post) == ""
    assert post_media(post) == "media"
    assert post_plain_text("not a post") == ""
