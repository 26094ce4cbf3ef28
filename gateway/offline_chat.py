"""``OfflineChatModel``: the clearly labelled local stand-in for the main model when no API key is set.

It does not pretend to be an assistant. It shows what memory retrieved for the message (so tierclaw's
memory can be tried before any key is configured) and acknowledges statements. How to get real answers
(``OFFLINE_HINT``) is said once per chat, not in every reply: the assistant adds it to a chat's first
reply, and the terminal prints the full notice when it starts (``gateway/assistant.py``). Deterministic:
the same request gives the same reply. A message written mostly in Chinese gets the Chinese wording.
"""

from __future__ import annotations

import re
import unicodedata

from gateway.agent import ChatRequest

OFFLINE_CHAT_LABEL = "offline (no API key)"
OFFLINE_HINT = (
    "(Offline mode: set provider.apiKey in ~/.tierclaw/config.json or TIERCLAW_PROVIDER_API_KEY "
    "for real answers.)"
)

_EN = {
    "prefix": "[offline model]",
    "memories": "Here is what I remember that seems relevant:",
    "nothing": "I don't recall anything about that yet.",
    "noted": "Noted.",
}
_ZH = {
    "prefix": "[离线模型]",
    "memories": "我记得这些可能相关的内容：",
    "nothing": "我还不记得与此相关的内容。",
    "noted": "已记下。",
}

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_EN_QUESTION_START = re.compile(
    r"^(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|am|can|could|would|"
    r"should|will|shall|may|have|has)\b",
    re.I,
)
_ZH_QUESTION = re.compile(r"^(?:什么|怎么|为什么|为啥|谁|哪|是否|能不能|可不可以)|[吗呢么嘛][~～。.!！\s]*$")
_ACKS = frozenset(
    {"ok", "okay", "yes", "no", "thanks", "thank you", "thx", "hi", "hello", "hey", "bye", "cool", "sure"}
    | {"好", "好的", "嗯", "嗯嗯", "谢谢", "你好", "哦", "行", "收到", "再见", "明白", "知道了"}
)
# A statement needs at least this many letters, digits or Han characters ("ok" is not one).
_MIN_STATEMENT_CHARS = 4


def _is_chinese(text: str) -> bool:
    return len(_HAN.findall(text)) >= len(_LATIN.findall(text)) and _HAN.search(text) is not None


def looks_like_statement(text: str) -> bool:
    """True for a message that tells something (not a question, greeting or bare acknowledgement)."""
    folded = unicodedata.normalize("NFKC", text).strip()
    bare = folded.lower().strip(" .!。！~～,，")
    if sum(ch.isalnum() for ch in bare) < _MIN_STATEMENT_CHARS or bare in _ACKS:
        return False
    if "?" in folded:
        return False
    return not (_EN_QUESTION_START.match(bare) or _ZH_QUESTION.search(bare))


class OfflineChatModel:
    """The main model's local stand-in (``gateway.agent.ChatModel``): no network, never fails."""

    # Its replies are gateway notices, not conversation: they stay out of history and memory.
    stand_in = True

    @property
    def label(self) -> str:
        return OFFLINE_CHAT_LABEL

    async def reply(self, request: ChatRequest) -> str:
        words = _ZH if _is_chinese(request.user_text) else _EN
        if request.memories:
            lines = [f"{words['prefix']} {words['memories']}"]
            lines += [f"{i}. {m.content}" for i, m in enumerate(request.memories, 1)]
        else:
            first = f"{words['prefix']} {words['nothing']}"
            if looks_like_statement(request.user_text):
                first += ("" if words is _ZH else " ") + words["noted"]
            lines = [first]
        return "\n".join(lines)
