"""Text emoji: the codes in brackets chat apps write for the emoji of their own panels ("[捂脸]", "[Smile]").

Why: WeChat and Feishu put an emoji picked from their panel into the text as its name in
brackets — "谢谢[抱拳]", "My dog is Rex[Smile]" — in Chinese or, from an English client, in English. To the
gate and the offline keeper a code is an emoji, not words: "谢谢[抱拳]" is thanks and "[捂脸]" alone is emoji
alone (``retrieval.gate``), and the fact in "我家狗叫旺财[捂脸]" is kept without it (``model.keeper``) —
and an English code after a word is not read as code's index ("a[i]", ``model.quick_extract``), which lost
the sentence. English codes are one capitalised word, or two run together ("[Facepalm]", "[ThumbsUp]",
"[OK]"); an index is lower case or one letter ("a[i]", "x[N]").
"""

from __future__ import annotations

import re

# A code: one to four Han characters (WeChat's and Feishu's Chinese names: 微笑, 捂脸, 快哭了), or an English
# name of two to sixteen letters opening with a capital; not a Markdown link's text ("[Acme](https://…)").
# A name a person puts in brackets ("我叫[小明]") reads as a code too: rare in chat, where 【】 and “” are the
# brackets people type, against the codes in nearly every WeChat and Feishu conversation.
_TEXT_EMOJI = re.compile(r"\[(?:[\u3400-\u4dbf\u4e00-\u9fff]{1,4}|[A-Z][A-Za-z]{1,15})\](?!\()")


def _gap(match: re.Match[str]) -> str:
    """What a code leaves: a space between two words ("Rex[Smile]and" → "Rex and"), else nothing
    ("谢谢[抱拳]！" → "谢谢！"); spaces the person typed around it stay."""
    text, start, end = match.string, match.start(), match.end()
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return " " if before.isalnum() and after.isalnum() else ""


def without_text_emoji(text: str) -> str:
    """``text`` with every text emoji taken out (``_gap`` says what stands in its place); ``text`` itself
    when it holds none."""
    if "[" not in text:
        return text
    return _TEXT_EMOJI.sub(_gap, text)
