"""What Telegram's server does with a message's text, as far as the local server needs it: UTF-16 lengths,
the entities it adds by itself (mentions, commands), whether a ``parse_mode=HTML`` text is accepted, and
the media field a non-text message carries."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from typing import Any

_HTML_TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre",
    "span", "tg-spoiler", "tg-emoji", "blockquote",
}  # fmt: skip
_ENTITY_WORD_RE = re.compile(r"(?<![\w@/])(@\w{3,32}|/\w+(?:@\w+)?)")


def utf16_len(text: str) -> int:
    """Telegram counts lengths and offsets in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def entities_for(text: str) -> list[dict]:
    """The ``mention`` and ``bot_command`` entities Telegram's server adds to a text by itself."""
    entities = []
    for match in _ENTITY_WORD_RE.finditer(text):
        word = match.group(1)
        if word.startswith("/") and match.start() != 0:
            continue
        entities.append(
            {
                "type": "bot_command" if word.startswith("/") else "mention",
                "offset": utf16_len(text[: match.start()]),
                "length": utf16_len(word),
            }
        )
    return entities


# Attributes Telegram reads per tag (anything else is refused here, to keep the renderer honest).
_ATTRIBUTES = {
    "a": {"href"},
    "code": {"class"},
    "span": {"class"},
    "blockquote": {"expandable"},
    "tg-emoji": {"emoji-id"},
}


class _TelegramHTML(HTMLParser):
    """Telegram's HTML rules, as far as a stub needs them: known tags, balanced, only 4 named entities,
    nothing inside code (but ``<code>`` directly in ``<pre>``), no quote inside a quote, ``<a>`` with
    an ``href``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.visible: list[str] = []
        self.error = ""

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in _HTML_TAGS:
            self.error = self.error or f'Unsupported start tag "{tag}"'
        inside = self.stack[-1] if self.stack else ""
        if inside == "code" or (inside == "pre" and tag != "code"):
            self.error = self.error or f'Can\'t use tag "{tag}" inside "{inside}"'
        if tag == "blockquote" and "blockquote" in self.stack:
            self.error = self.error or "Blockquote can't be nested"
        names = {name for name, _value in attrs}
        if names - _ATTRIBUTES.get(tag, set()):
            self.error = self.error or f'Unsupported attribute of "{tag}"'
        if tag == "a" and not dict(attrs).get("href"):
            self.error = self.error or 'Tag "a" must have an href'
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.error = self.error or f'Unmatched end tag "{tag}"'
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if "<" in data or ">" in data or "&" in data:
            self.error = self.error or "Unescaped character in text"
        self.visible.append(data)

    def handle_entityref(self, name: str) -> None:
        if name not in ("lt", "gt", "amp", "quot"):
            self.error = self.error or f'Unsupported HTML entity "&{name};"'
        self.visible.append(unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.visible.append(unescape(f"&#{name};"))


def check_html(text: str) -> tuple[str, str]:
    """``(visible_text, error)`` for a ``parse_mode=HTML`` text; ``error`` is "" when Telegram accepts it."""
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.rawdata:  # an unfinished tag such as "<b" left in the buffer
        parser.error = parser.error or "Unclosed start tag"
    if parser.stack and not parser.error:
        parser.error = f'Can\'t find end tag corresponding to start tag "{parser.stack[-1]}"'
    return "".join(parser.visible), parser.error


def media_payload(kind: str) -> Any:
    """The field a message of ``kind`` (photo, voice, sticker, …) carries instead of text, as Telegram
    sends it."""
    file = {"file_id": f"{kind}-file", "file_unique_id": f"{kind}-unique"}
    if kind == "photo":
        return [{**file, "width": 90, "height": 90}]
    if kind in ("voice", "audio"):
        return {**file, "duration": 3}
    if kind in ("video", "animation"):
        return {**file, "duration": 3, "width": 90, "height": 90}
    if kind == "video_note":
        return {**file, "duration": 3, "length": 90}
    if kind == "sticker":
        return {**file, "width": 90, "height": 90, "is_animated": False, "is_video": False, "type": "regular"}
    return file  # document
