"""Feishu message bodies: replies as ``text`` or Markdown ``post``, and the plain text of a received post.

A reply that looks like Markdown goes out as a ``post`` whose paragraphs are ``md`` elements, which Feishu
renders (bold, italics, links, lists, inline code, code blocks, quotes). Two quirks shape the paragraphs:
a fenced code block shares its element with nothing (text after a fence in the same element is lost), and
``#`` headings are not rendered, so they become bold lines. Everything else is sent as plain ``text``,
where ``**`` would show literally.

Content is a JSON *string* on the wire (``{"text": ...}`` or ``{"zh_cn": {"content": [[...]]}}``).
"""

from __future__ import annotations

import json
import re
from typing import Any

_MARKDOWN_RE = re.compile(
    r"\*\*[^*\n]+\*\*"  # bold
    r"|__[^_\n]+__"
    r"|~~[^~\n]+~~"  # strikethrough
    r"|`[^`\n]+`"  # inline code
    r"|^\s*(?:```|~~~)"  # code fence
    r"|\[[^\]\n]+\]\([^)\s]+\)"  # link
    r"|^\s{0,3}#{1,6}\s+\S"  # heading
    r"|^\s*(?:[-*+]|\d{1,3}[.)])\s+\S"  # list item
    r"|^\s{0,3}>\s?\S",  # quote
    re.MULTILINE,
)
_FENCE_RE = re.compile(r"^\s*(```+|~~~+)")
_HEADING_RE = re.compile(r"^(\s{0,3})#{1,6}\s+(.*?)\s*#*\s*$")


def looks_like_markdown(text: str) -> bool:
    """Whether ``text`` uses Markdown a chat reader would otherwise see as raw symbols."""
    return bool(_MARKDOWN_RE.search(text))


def text_content(text: str) -> str:
    """The ``content`` string of a ``text`` message."""
    return json.dumps({"text": text}, ensure_ascii=False)


def post_content(markdown: str) -> str:
    """The ``content`` string of a ``post`` message rendering ``markdown`` (see the module doc)."""
    rows = [[{"tag": "md", "text": block}] for block in _md_blocks(markdown)]
    return json.dumps({"zh_cn": {"content": rows}}, ensure_ascii=False)


def reply_body(text: str) -> tuple[str, str]:
    """``(msg_type, content)`` for one reply piece: ``post`` when it has Markdown, else ``text``."""
    if looks_like_markdown(text):
        return "post", post_content(text)
    return "text", text_content(text)


def _md_blocks(markdown: str) -> list[str]:
    """Paragraph texts: runs of prose (headings made bold) and each fenced code block on its own."""
    blocks: list[str] = []
    prose: list[str] = []
    fence: list[str] | None = None
    marker = ""

    def flush_prose() -> None:
        text = "\n".join(prose).strip("\n")
        prose.clear()
        if text.strip():
            blocks.append(text)

    for line in markdown.split("\n"):
        if fence is not None:
            fence.append(line)
            stripped = line.strip()
            if stripped.startswith(marker) and stripped.strip(marker[0]) == "":
                blocks.append("\n".join(fence))
                fence = None
            continue
        match = _FENCE_RE.match(line)
        if match:
            flush_prose()
            fence, marker = [line], match.group(1)
            continue
        heading = _HEADING_RE.match(line)
        prose.append(f"{heading.group(1)}**{heading.group(2)}**" if heading and heading.group(2) else line)
    if fence is not None:  # an unclosed fence: close it so the rest still renders as code
        blocks.append("\n".join([*fence, marker]))
    flush_prose()
    return blocks or [""]


def post_plain_text(content: Any) -> str:
    """The words of a received ``post``: title, then each paragraph's text elements concatenated.

    Received posts come as ``{"title", "content": [[...]]}``, sometimes wrapped in a locale key
    (``{"zh_cn": {...}}``). ``at`` elements keep their placeholder (``@_user_1``) so mentions are resolved
    like in a text message; images and media carry no words.
    """
    body = _post_body(content)
    lines: list[str] = []
    title = body.get("title")
    if isinstance(title, str) and title.strip():
        lines.append(title.strip())
    for paragraph in _paragraphs(body):
        line = "".join(_element_text(element) for element in paragraph).strip()
        if line:
            lines.append(line)
    return "\n".join(lines)


def post_media(content: Any) -> str:
    """``"image"`` or ``"media"`` when a received post carries one (the first found), else ``""``."""
    for paragraph in _paragraphs(_post_body(content)):
        for element in paragraph:
            if element.get("tag") == "img":
                return "image"
            if element.get("tag") == "media":
                return "media"
    return ""


def _post_body(content: Any) -> dict[str, Any]:
    if not isinstance(content, dict):
        return {}
    if "content" in content:
        return content
    return next((v for v in content.values() if isinstance(v, dict) and "content" in v), {})


def _paragraphs(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    paragraphs = body.get("content")
    if not isinstance(paragraphs, list):
        return []
    return [[e for e in p if isinstance(e, dict)] for p in paragraphs if isinstance(p, list)]


def _element_text(element: dict[str, Any]) -> str:
    tag = element.get("tag")
    if tag in ("text", "a", "md", "code_block"):
        return str(element.get("text") or "")
    if tag == "at":
        user = str(element.get("user_id") or "")
        if user.startswith("@_"):
            return user
        name = element.get("user_name") or user
        return f"@{name}" if name else ""
    if tag == "emotion":
        return f"[{element.get('emoji_type', '')}]"
    return ""
