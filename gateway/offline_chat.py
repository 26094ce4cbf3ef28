"""``OfflineChatModel``: the clearly labelled local stand-in for the main model when no API key is set.

It does not pretend to be an assistant. It shows what memory retrieved for the message (so tierclaw's
memory can be tried before any key is configured) and says exactly what it will keep: "I'll remember: …"
with the facts, found by the same function the offline memory model extracts with
(``memory.model.keeper.FactKeeper``, one keeper shared by both), so the promise and what is stored
cannot drift apart. To a
statement it will not keep it says so plainly; to chit-chat ("haha", "Good morning!") it promises nothing.
How to get real answers (``offline_hint``) is said once per chat, not in every reply: the assistant adds it
to a chat's first reply, and the terminal prints the full notice when it starts (``gateway/assistant.py``).
Deterministic: the same request gives the same reply. A message written mostly in Chinese gets the Chinese
wording, hint included.
"""

from __future__ import annotations

import re
import unicodedata

from gateway.agent import ChatRequest
from gateway.reminders.offline import scheduled_reply, zone_question
from memory.model.keeper import FactKeeper
from memory.text.wording import is_chinese

OFFLINE_CHAT_LABEL = "offline (no API key)"
OFFLINE_HINT = (
    "(Offline mode: set provider.apiKey in ~/.tierclaw/config.json or TIERCLAW_PROVIDER_API_KEY "
    "for real answers.)"
)
OFFLINE_HINT_ZH = (
    "（离线模式：在 ~/.tierclaw/config.json 里设置 provider.apiKey，"
    "或设置环境变量 TIERCLAW_PROVIDER_API_KEY，即可得到真正的回答。）"
)

_EN = {
    "prefix": "[offline model]",
    "memories": "What I recall that seems relevant:",
    "nothing": "I don't recall anything about that yet.",
    "kept": "I'll remember: ",
    "not_kept": "I'm only the offline stand-in, and I didn't save that.",
    "join": "; ",
}
_ZH = {
    "prefix": "[离线模型]",
    "memories": "我想起这些可能相关的内容：",
    "nothing": "我还不记得与此相关的内容。",
    "kept": "记住了：",
    "not_kept": "我只是离线替身，这句话没有保存。",
    "join": "；",
}

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
# Chit-chat that is not a question and still tells nothing: laughter, greetings, thanks, reactions.
_CHITCHAT = re.compile(
    r"^(?:(?:ha|he|hi|lo)+l?|(?:lol|lmao|rofl|haha\w*|hehe\w*)\b.*|xd+|wow\w*|omg|haha\w*|hmm+|ah+|oh+|yay|nice|great|"
    r"good (?:morning|afternoon|evening|night)|morning|night|thanks?\b.*|thank you\b.*|see you\b.*|"
    r"bye\b.*|tell me a (?:joke|story)\b.*|no way|i see|cool|awesome|sounds (?:good|great)|"
    r"that(?:'s| is| sounds) \w+(?: \w+)?|let's \w+.*)$"
    r"|^(?:哈+|呵+|嘿+|哇+|嗯+|哦+|啊+|早上好|早安|早|晚安|午安|下午好|晚上好|谢谢.*|多谢.*|再见|拜拜|回头见|"
    r"笑死.*|.*笑死我了|原来如此|好吧|不会吧|真的假的|厉害|牛|太好了|给我讲个?(?:笑话|故事).*|讲个?笑话.*|"
    r"换个话题.*|听起来.*)$",
    re.I,
)


def offline_hint(text: str) -> str:
    """How to get real answers, in the language of ``text`` (the message being answered)."""
    return OFFLINE_HINT_ZH if is_chinese(text) else OFFLINE_HINT


def looks_like_statement(text: str) -> bool:
    """True for a message that tells something (not a question, greeting, laugh or bare acknowledgement)."""
    folded = unicodedata.normalize("NFKC", text).strip()
    bare = folded.lower().strip(" .!。！~～,，")
    if sum(ch.isalnum() for ch in bare) < _MIN_STATEMENT_CHARS or bare in _ACKS:
        return False
    if "?" in folded or _CHITCHAT.match(bare):
        return False
    return not (_EN_QUESTION_START.match(bare) or _ZH_QUESTION.search(bare))


async def kept_from(text: str, keeper: FactKeeper | None = None) -> list[str]:
    """What the offline memory model will keep of the user's message: the same ``FactKeeper.facts`` call
    its extraction makes (``memory/model/offline_model.py``), shown as said."""
    facts = await (keeper or FactKeeper()).facts(text)
    return [" ".join(fact.content.split()).rstrip("。.!！") for fact in facts]


class OfflineChatModel:
    """The main model's local stand-in (``gateway.agent.ChatModel``): no network, never fails."""

    # Its replies are gateway notices, not conversation: they stay out of history and memory.
    stand_in = True

    def __init__(self, keeper: FactKeeper | None = None) -> None:
        self.keeper = keeper or FactKeeper()

    @property
    def label(self) -> str:
        return OFFLINE_CHAT_LABEL

    async def reply(self, request: ChatRequest) -> str:
        words = _ZH if is_chinese(request.user_text) else _EN
        scheduled = await scheduled_reply(request)  # "remind me…": what was scheduled, or why not
        if scheduled is not None:
            return f"{words['prefix']} {scheduled}"
        kept = await kept_from(request.user_text, self.keeper)
        lines: list[str] = []
        if kept:
            lines.append(f"{words['prefix']} {words['kept']}{words['join'].join(kept)}")
        if request.memories:
            lines.append(f"{words['prefix']} {words['memories']}")
            lines += [f"{i}. {m.content}" for i, m in enumerate(request.memories, 1)]
        if not lines:
            said = words["not_kept"] if looks_like_statement(request.user_text) else words["nothing"]
            lines.append(f"{words['prefix']} {said}")
        question = await zone_question(request)  # "I live in Tokyo": use Asia/Tokyo for reminders?
        if question:
            lines.append(f"{words['prefix']} {question}")
        return "\n".join(lines)
