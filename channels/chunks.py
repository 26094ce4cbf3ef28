"""Cutting a long reply into messages a platform accepts (Telegram: 4096 characters, Feishu: 4000).

``split_text`` is the one function every channel cuts with (Telegram, Feishu, and streamed replies). Cuts
fall on the largest boundary that fits: between paragraphs, then lines, then sentences, then words —
between two Han/kana/hangul characters counts as between words, as Chinese and Japanese are written
without spaces — and inside a word only when that one word is longer than the limit. A fenced code block
is never cut while it fits in one message; a block longer than that is cut between its lines (a line too
long for one message between its words), and every piece is closed and reopened with the same fence
line, so each message renders on its own.
"""

from __future__ import annotations

import re

_FENCE_RE = re.compile(r"^\s*(```+|~~~+)")
# A sentence ends at . ! ? followed by a space (not the dot of "3.11" or "example.com"), or at 。！？.
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)\]]*(?:\s+|$)|[。！？]+[\"'”’)\]」』]*\s*")
# Scripts written without spaces between words: a cut may fall between any two of their characters.
_UNSPACED = "\u2e80-\u2fdf\u3040-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# One word with the spaces after it: a run of other non-space characters, or one unspaced-script character.
_WORD_RE = re.compile(rf"\s+|[{_UNSPACED}]\s*|[^\s{_UNSPACED}]+\s*")


def split_text(text: str, limit: int) -> list[str]:
    """``text`` as pieces of at most ``limit`` characters, cut at the best boundaries (see module doc)."""
    if limit < 16:
        raise ValueError("limit must be at least 16 characters")
    text = text.strip()
    if len(text) <= limit:
        return [text] if text else []
    pieces = _pack(_blocks(text), "\n", limit, _split_block)
    return [piece.strip() for piece in pieces if piece.strip()]


def _blocks(text: str) -> list[str]:
    """Runs of ordinary lines and whole fenced code blocks (an unclosed fence runs to the end)."""
    blocks: list[str] = []
    run: list[str] = []
    fence: list[str] | None = None
    marker = ""
    for line in text.split("\n"):
        if fence is None:
            match = _FENCE_RE.match(line)
            if match:
                if run:
                    blocks.append("\n".join(run))
                    run = []
                fence, marker = [line], match.group(1)
            else:
                run.append(line)
        else:
            fence.append(line)
            if _closes(line, marker):
                blocks.append("\n".join(fence))
                fence = None
    if fence is not None:
        blocks.append("\n".join(fence))
    if run:
        blocks.append("\n".join(run))
    return blocks


def _closes(line: str, marker: str) -> bool:
    """A closing fence: only the opening character, at least as many as opened (CommonMark)."""
    text = line.strip()
    return len(text) >= len(marker) and text == marker[0] * len(text)


def _split_block(block: str, limit: int) -> list[str]:
    if fence := _FENCE_RE.match(block):
        return _split_fence(block, fence.group(1), limit)
    return _split_plain(block, limit, 0)


_PLAIN_SEPARATORS = ("\n\n", "\n", "sentence", "word", "")
_WORD_LEVEL = _PLAIN_SEPARATORS.index("word")


def _split_plain(text: str, limit: int, level: int) -> list[str]:
    """Cut at paragraph, then line, then sentence, then word boundaries; a single word longer than
    ``limit`` (a long URL, a run of one character) is the only text cut every ``limit`` characters."""
    if len(text) <= limit:
        return [text]
    sep = _PLAIN_SEPARATORS[level]
    if sep == "":
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    if sep in ("sentence", "word"):
        units = _sentences(text) if sep == "sentence" else _WORD_RE.findall(text)
        return _pack(units, "", limit, lambda unit, lim: _split_plain(unit, lim, level + 1))
    units = text.split(sep)
    return _pack(units, sep, limit, lambda unit, lim: _split_plain(unit, lim, level + 1))


def _sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end (``_SENTENCE_END``), the spaces after it kept with it."""
    units, start = [], 0
    for end in _SENTENCE_END.finditer(text):
        units.append(text[start : end.end()])
        start = end.end()
    if start < len(text):
        units.append(text[start:])
    return [unit for unit in units if unit]


def _split_fence(block: str, marker: str, limit: int) -> list[str]:
    """A code block too long for one message (``marker``: its opening fence): its lines in pieces, each
    closed and reopened."""
    lines = block.split("\n")
    opening = lines[0]
    body = lines[1:]
    if body and _closes(body[-1], marker):
        body = body[:-1]
    closing = marker
    room = limit - len(opening) - len(closing) - 2
    if room < 8:  # an absurdly long fence line: treat the block as plain text
        return _split_plain(block, limit, 1)
    inner = _pack(body, "\n", room, lambda line, lim: _split_plain(line, lim, _WORD_LEVEL))
    return [f"{opening}\n{piece}\n{closing}" for piece in inner]


def _pack(units: list[str], sep: str, limit: int, split_unit) -> list[str]:
    """Greedily join ``units`` with ``sep`` into pieces ≤ ``limit``; a unit too long is cut by ``split_unit``.

    The pieces of a cut unit are never re-joined with ``sep`` (their boundary is a finer one): only the
    first may join the piece before it and only the last the piece after it.
    """
    out: list[str] = []
    current: str | None = None
    for unit in units:
        parts = [unit] if len(unit) <= limit else split_unit(unit, limit)
        for i, part in enumerate(parts):
            if i == 0 and current is not None and len(current) + len(sep) + len(part) <= limit:
                current = current + sep + part
                continue
            if current is not None:
                out.append(current)
            current = part
            if 0 < i < len(parts) - 1:
                out.append(current)
                current = None
    if current is not None:
        out.append(current)
    return out
