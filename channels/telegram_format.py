"""Markdown (as chat models write it) to the small HTML subset Telegram's ``parse_mode=HTML`` accepts.

Why HTML and not MarkdownV2: MarkdownV2 needs 18 characters escaped everywhere and rejects the whole
message over one stray ``.``; in HTML only ``& < >`` need escaping, so arbitrary model text is safe once
escaped. Every tag here is produced from a matched pair of markers, so the output is always balanced;
anything that is not recognised stays as literal, escaped text. Handled: fenced code blocks (with a
language class), inline code, bold, italic, strikethrough, links (http, https, tg, mailto), headings
(shown bold) and bullets. Code is never nested inside other entities (Telegram forbids it).
"""

from __future__ import annotations

import re
from html import escape

_FENCE_RE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET_RE = re.compile(r"^(\s*)[-*+]\s+(?=\S)")
_INLINE_RE = re.compile(
    r"(?P<ticks>`+)(?P<code>.+?)(?P=ticks)"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>(?:https?://|tg://|mailto:)[^\s()<>]+)\)"
    r"|\*\*\*(?P<bolditalic>(?!\s).+?(?<!\s))\*\*\*"
    r"|\*\*(?P<bold>(?!\s).+?(?<!\s))\*\*"
    r"|(?<!\w)__(?P<bold2>(?!\s).+?(?<!\s))__(?!\w)"
    r"|~~(?P<strike>(?!\s).+?(?<!\s))~~"
    r"|(?<![\w*])\*(?P<italic>(?![\s*]).*?(?<![\s*]))\*(?![\w*])"
    r"|(?<![\w_])_(?P<italic2>(?![\s_]).*?(?<![\s_]))_(?![\w_])"
)

_PAIRS = (("bold", "b"), ("bold2", "b"), ("strike", "s"), ("italic", "i"), ("italic2", "i"))


def markdown_to_html(text: str) -> str:
    """``text`` as Telegram HTML: fenced code becomes ``<pre>``, the rest is rendered line by line."""
    out: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = _FENCE_RE.match(lines[i])
        if fence is None:
            out.append(_line(lines[i]))
            i += 1
            continue
        marker, language = fence.group(1), fence.group(2)
        body: list[str] = []
        i += 1
        while i < len(lines) and not _closes(lines[i], marker):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence (or the end of an unclosed block)
        css = f' class="language-{escape(language, quote=True)}"' if language else ""
        out.append(f"<pre><code{css}>{escape(chr(10).join(body), quote=False)}</code></pre>")
    return "\n".join(out)


def _closes(line: str, marker: str) -> bool:
    """CommonMark: a fence closes with the same character, at least as many of it, and nothing else.

    So a block opened with four backticks can show a three-backtick fence inside it.
    """
    stripped = line.strip()
    return len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def _line(line: str) -> str:
    heading = _HEADING_RE.match(line)
    if heading:
        return f"<b>{_inline(heading.group(1), code=False)}</b>" if heading.group(1) else ""
    bullet = _BULLET_RE.match(line)
    if bullet:
        return bullet.group(1) + "• " + _inline(line[bullet.end() :])
    return _inline(line)


def _inline(text: str, *, code: bool = True) -> str:
    """Inline markup of one line; ``code=False`` inside other entities, where code shows as plain text."""
    out: list[str] = []
    pos = 0
    for match in _INLINE_RE.finditer(text):
        out.append(escape(text[pos : match.start()], quote=False))
        pos = match.end()
        if match.group("ticks"):
            body = escape(_trim_code(match.group("code")), quote=False)
            out.append(f"<code>{body}</code>" if code else body)
        elif match.group("url"):
            url = escape(match.group("url"), quote=True)
            out.append(f'<a href="{url}">{_inline(match.group("label"), code=False)}</a>')
        elif match.group("bolditalic"):
            out.append(f"<b><i>{_inline(match.group('bolditalic'), code=False)}</i></b>")
        else:
            for name, tag in _PAIRS:
                if match.group(name):
                    out.append(f"<{tag}>{_inline(match.group(name), code=False)}</{tag}>")
                    break
            else:  # an empty pair such as ``**`` matched nothing worth a tag
                out.append(escape(match.group(0), quote=False))
    out.append(escape(text[pos:], quote=False))
    return "".join(out)


def _trim_code(body: str) -> str:
    """Markdown lets ``` `` `x` `` ``` pad a code span with one space on each side."""
    if len(body) > 2 and body.startswith(" ") and body.endswith(" ") and body.strip():
        return body[1:-1]
    return body
