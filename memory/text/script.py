"""Traditional Chinese folded to Simplified for everything that matches text; the text kept as typed.

The tokenizer's dictionary (jieba), the gate's and the question detector's patterns, the head's training
text and the offline stand-in's clause rules are all Simplified, so "我的貓叫什麼" matched nothing that
"我的猫叫什么" matches (issue 35: the seventh blind set, all Traditional, scored zh ask recall 0.462;
the same set converted to Simplified 0.827). Every matcher therefore reads ``to_simplified(text)``; what is
stored and shown stays exactly as the person typed it (``restore`` puts the typed characters back into a
piece cut from the folded text).

The conversion is OpenCC's ``t2s`` (Apache-2.0, a C++ wheel), imported on the first text that holds a Han
character (~25 ms import + ~7 ms dictionary, paid once per process; ``warm_up`` pays it off the reply
path). ASCII text returns at once, and a cache keeps a repeated message free. OpenCC ``t2s`` maps every
single Han character to one character (checked over every BMP CJK code point) and its phrases to phrases
of the same length, so offsets into the folded text cut the typed text; ``to_simplified`` guarantees it
anyway (a conversion that changed the length falls back to character by character).
Without the wheel (a platform it does not build for) the text is matched as typed, with one warning.

One more fold rides on it, for the same matchers: 俺, the first person of northern Mandarin (河南, 山东, 东北:
"俺家", "俺们"), is read as 我 — the gate's and the stand-in's patterns and the tokenizer's stop words say 我,
and a person who writes 俺 said nothing else (the eighth blind set, a 河南 speaker: keyword-only tells
kept 0 of 62). One character for one, so ``restore`` still puts the typed text back.
"""

from __future__ import annotations

import difflib
import logging
import re
import threading
from functools import lru_cache
from typing import Any, Protocol, TypeVar

__all__ = ["restore", "restore_contents", "to_simplified", "warm_up"]

log = logging.getLogger("tierclaw.memory")

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
# Regional forms read as the standard one (see the module docstring): one character for one.
_REGIONAL = str.maketrans({"俺": "我"})
_lock = threading.Lock()
_converter: Any = None
_missing = False


def warm_up() -> None:
    """Import OpenCC and load its ``t2s`` dictionary once (blocking, ~30 ms): call it off the event loop."""
    global _converter, _missing
    with _lock:
        if _converter is not None or _missing:
            return
        try:
            import opencc
        except ImportError:
            _missing = True
            log.warning("[memory] opencc is not installed: Traditional Chinese is matched as typed")
            return
        _converter = opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    """``text`` with Traditional Chinese characters and phrases in Simplified and 俺 as 我, the same length;
    any other character unchanged. ASCII and text without Han characters cost a scan and no conversion."""
    if text.isascii() or _HAN.search(text) is None:
        return text
    return _folded(text)


@lru_cache(maxsize=8192)
def _folded(text: str) -> str:
    if _converter is None:
        warm_up()
        if _converter is None:
            return text.translate(_REGIONAL)
    out = str(_converter.convert(text))
    if len(out) != len(text):
        # A phrase mapped to another length (none known in OpenCC 1.4's t2s): fold character by character.
        pairs = ((ch, str(_converter.convert(ch))) for ch in text)
        out = "".join(c if len(c) == 1 else ch for ch, c in pairs)
    return out.translate(_REGIONAL)


def restore(derived: str, typed: str) -> str:
    """``derived`` (cut or glued from ``to_simplified(typed)``: a clause, a cleaned sentence) with the
    characters it took from the text put back as ``typed`` had them; characters it added stay."""
    folded = to_simplified(typed)
    if folded == typed or not derived:
        return derived
    at = folded.find(derived)
    if at >= 0:
        return typed[at : at + len(derived)]
    out = list(derived)
    matcher = difflib.SequenceMatcher(None, derived, folded, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        out[a : a + size] = typed[b : b + size]
    return "".join(out)


class _HasContent(Protocol):
    content: str


Item = TypeVar("Item", bound=_HasContent)


def restore_contents(items: list[Item], typed: str) -> list[Item]:
    """``items`` (facts found in ``to_simplified(typed)``) with each ``content`` as ``typed`` wrote it."""
    for item in items:
        item.content = restore(item.content, typed)
    return items
