"""A cheap token estimate for budgets (extraction batches), no tokenizer download needed.

Chinese, Japanese and Korean characters cost about one token each in current BPE vocabularies; other text
about four characters per token. Good to ±30 %, which is all a budget of "about 6000 tokens" needs.
"""

from __future__ import annotations

import math
import re

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (at least 1 for non-empty text, 0 for empty)."""
    if not text:
        return 0
    cjk = len(_CJK.findall(text))
    return max(1, cjk + math.ceil((len(text) - cjk) / 4))
