"""Markdown (as chat models write it) to the small HTML subset Telegram's ``parse_mode=HTML`` accepts.

Why HTML and not MarkdownV2: MarkdownV2 needs 18 characters escaped everywhere and rejects the whole
message over one stray ``.``; in HTML only ``& < >`` need escaping, so arbitrary model text is safe once
escaped. The Markdown is parsed by markdown-it-py (CommonMark plus tables and strikethrough; raw HTML in
the text is shown as text) and the syntax tree is rendered here, so every tag comes from a node that was
opened and closed: the output is balanced by construction. What Telegram has no tag for is rendered as
text that reads well: headings bold, list items as "•" or "1.", tables as preformatted text with aligned
columns, a rule as a line. Telegram's own limits are kept: code never inside another entity, no quote
inside a quote, links only with the schemes a Telegram client opens. Blank lines between blocks are kept
as the model wrote them.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.tree import SyntaxTreeNode

LINK_SCHEMES = ("http://", "https://", "tg://", "mailto:")
RULE = "——————"
_INLINE_TAGS = {"strong": "b", "em": "i", "s": "s"}


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])


def markdown_to_html(text: str) -> str:
    """``text`` as Telegram HTML (see the module doc for what becomes what)."""
    return _rendered(text)[0].strip("\n")


def _rendered(text: str) -> tuple[str, int]:
    """The top-level blocks of ``text`` rendered (not yet stripped), and how many there are."""
    from markdown_it.tree import SyntaxTreeNode

    tree = SyntaxTreeNode(_parser().parse(text))
    return _Renderer(text.split("\n")).blocks(tree.children, in_quote=False), len(tree.children)


class DraftRenderer:
    """A growing text rendered again and again (a streamed draft), re-parsing only its open end.

    Why: a draft is sent every second with the whole reply so far, and parsing it whole each time cost
    a reply more CPU than the rest of its streaming (bench/README.md, "Streaming"). What lies before a
    blank line followed by a line that can only start a new top-level block (at column 0, outside a code
    fence, not a list item or a link definition that could belong to what came before) renders the same
    alone as within the whole, so it is rendered once and kept. Invariant: ``render(t)`` equals
    ``markdown_to_html(t)`` for every ``t``; a text that does not continue the last one starts afresh.
    """

    def __init__(self) -> None:
        self._source = ""  # the settled beginning of the text
        self._html = ""  # its rendering
        self._blocks = 0  # and how many top-level blocks it holds

    def render(self, text: str) -> str:
        if "]:" in text:  # a link definition reaches back and forth across blocks: render it whole
            return markdown_to_html(text)
        if not text.startswith(self._source):
            self._source, self._html, self._blocks = "", "", 0
        cut = _settled_end(text, len(self._source))
        if cut > len(self._source):
            self._html, self._blocks = self._joined(text[len(self._source) : cut])
            self._source = text[:cut]
        return self._joined(text[cut:])[0].strip("\n")

    def _joined(self, more: str) -> tuple[str, int]:
        """What is kept, then ``more``'s blocks, after a blank line (a cut is always at one)."""
        html, blocks = _rendered(more)
        if not blocks or not self._blocks:
            return self._html + html, self._blocks + blocks
        return f"{self._html}\n\n{html}", self._blocks + blocks


_CONTINUES = "-*+[|0123456789 \t"  # first characters of a line that may continue the block before it


def _settled_end(text: str, start: int) -> int:
    """The last offset after ``start`` where a new top-level block starts after a blank line, or
    ``start`` (itself such a place, outside any fence)."""
    cut, fence, blank_before, at = start, "", False, start
    for line in text[start:].split("\n"):
        bare = line.lstrip(" ")
        if fence:  # inside a fence until a line of at least as many of its characters
            if len(line) - len(bare) < 4 and bare.rstrip() and bare.rstrip() == fence[0] * len(bare.rstrip()):
                fence = "" if len(bare.rstrip()) >= len(fence) else fence
        else:
            if blank_before and line and line[0] not in _CONTINUES:
                cut = at
            if len(line) - len(bare) < 4 and bare[:3] in ("```", "~~~"):
                fence = bare[: len(bare) - len(bare.lstrip(bare[0]))]
            blank_before = not line.strip()
        at += len(line) + 1
    return cut


class _Renderer:
    """Renders one message's tree; keeps its source lines to tell where the model left blank lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def blank_before(self, node: SyntaxTreeNode) -> bool:
        """Whether the source line before ``node`` is empty (inside a quote: empty but for ``>``)."""
        if node.map is None or node.map[0] == 0 or node.map[0] > len(self.lines):
            return False
        return not self.lines[node.map[0] - 1].replace(">", "").strip()

    def blocks(self, nodes: list[SyntaxTreeNode], *, in_quote: bool) -> str:
        """Sibling blocks, separated by a blank line where the source had one, else by a line break."""
        out: list[str] = []
        for node in nodes:
            if out:
                out.append("\n\n" if self.blank_before(node) else "\n")
            out.append(self.block(node, in_quote=in_quote))
        return "".join(out)

    def block(self, node: SyntaxTreeNode, *, in_quote: bool) -> str:
        kind = node.type
        if kind == "paragraph":
            return _inline(node.children[0]) if node.children else ""
        if kind == "heading":
            body = _inline(node.children[0], in_entity=True) if node.children else ""
            return f"<b>{body}</b>" if body.strip() else body
        if kind in ("fence", "code_block"):
            language = node.info.split()[0] if node.info.strip() else ""
            css = f' class="language-{escape(language, quote=True)}"' if language else ""
            return f"<pre><code{css}>{escape(node.content.rstrip(chr(10)), quote=False)}</code></pre>"
        if kind in ("bullet_list", "ordered_list"):
            return self.list(node, in_quote=in_quote)
        if kind == "blockquote":
            inner = self.blocks(node.children, in_quote=True)
            if in_quote or not inner.strip():  # Telegram: no quote in a quote, and no empty entity
                return inner
            return f"<blockquote>{inner}</blockquote>"
        if kind == "table":
            return self.table(node)
        if kind == "hr":
            return RULE
        return escape(node.content, quote=False)

    def list(self, node: SyntaxTreeNode, *, in_quote: bool) -> str:
        """Items one per line; an item's further lines are indented under its text (nested lists too)."""
        start = int(node.attrs.get("start", 1)) if node.type == "ordered_list" else 1
        lines: list[str] = []
        for number, item in enumerate(node.children, start=start):
            marker = f"{number}." if node.type == "ordered_list" else "•"
            body = self.blocks(item.children, in_quote=in_quote)
            indent = "\n" + " " * (len(marker) + 1)
            lines.append(f"{marker} {body.replace(chr(10), indent)}")
        return "\n".join(lines)

    @staticmethod
    def table(node: SyntaxTreeNode) -> str:
        """A table as preformatted text: columns padded to the widest cell (CJK counts double)."""
        from rich.cells import cell_len

        rows = [
            [_plain(cell) for cell in row.children]
            for section in node.children
            for row in section.children
            if row.type == "tr"
        ]
        if not rows:
            return ""
        columns = max(len(row) for row in rows)
        rows = [row + [""] * (columns - len(row)) for row in rows]
        widths = [max(cell_len(row[i]) for row in rows) for i in range(columns)]

        def line(cells: list[str]) -> str:
            return " | ".join(
                c + " " * (w - cell_len(c)) for c, w in zip(cells, widths, strict=True)
            ).rstrip()

        out = [line(rows[0]), "-+-".join("-" * w for w in widths)] + [line(row) for row in rows[1:]]
        return f"<pre>{escape(chr(10).join(out), quote=False)}</pre>"


def _plain(node: SyntaxTreeNode) -> str:
    """The visible text of a node, without markup (for places that cannot hold entities)."""
    if node.type in ("text", "code_inline"):
        return node.content
    if node.type in ("softbreak", "hardbreak"):
        return " "
    return "".join(_plain(child) for child in node.children)


def _inline(node: SyntaxTreeNode, *, in_entity: bool = False) -> str:
    """An inline run; ``in_entity``: inside another entity, where Telegram does not allow code."""
    out: list[str] = []
    for child in node.children:
        kind = child.type
        if kind == "text":
            out.append(escape(child.content, quote=False))
        elif kind in ("softbreak", "hardbreak"):
            out.append("\n")
        elif kind == "code_inline":
            code = escape(child.content, quote=False)
            out.append(code if in_entity else f"<code>{code}</code>")
        elif kind in _INLINE_TAGS:
            tag = _INLINE_TAGS[kind]
            out.append(f"<{tag}>{_inline(child, in_entity=True)}</{tag}>")
        elif kind == "link":
            out.append(_link(str(child.attrs.get("href", "")), _inline(child, in_entity=True)))
        elif kind == "image":
            alt = escape(_plain(child), quote=False) or escape(str(child.attrs.get("src", "")), quote=False)
            out.append(_link(str(child.attrs.get("src", "")), alt))
        else:  # html_inline (raw HTML is off, but to be safe), entities already decoded into text
            out.append(escape(child.content, quote=False))
    return "".join(out)


def _link(url: str, label: str) -> str:
    """``<a>`` for a URL a Telegram client opens; just the label otherwise."""
    if not url.lower().startswith(LINK_SCHEMES):
        return label
    return f'<a href="{escape(url, quote=True)}">{label or escape(url, quote=False)}</a>'
