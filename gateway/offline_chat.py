"""``OfflineChatModel``: the clearly labelled local stand-in for the main model when no API key is set.

It does not pretend to be an assistant. It shows what memory retrieved for the message (so tierclaw's
memory can be tried before any key is configured) and says exactly what it will keep: "I'll remember: …"
with the facts, found by the same function the offline memory model extracts with
(``memory.model.keeper.FactKeeper``, one keeper shared by both), so the promise and what is stored
cannot drift apart. With the offline memory model the promise is kept at once (``remembers_at_once``:
the assistant extracts the message before the next one, ``gateway/assistant.py``), so a question a moment
later finds it; otherwise it says the memory comes once the conversation goes quiet. To a statement it
will not keep it says so plainly; to chit-chat and general questions ("haha", "what is the capital of
Australia?") — anything but a question about the person's own life — it says what it is, rather than
"I don't recall…".
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
from memory.retrieval.gate import asks_about_themselves, personal_question
from memory.text.wording import is_chinese

OFFLINE_CHAT_LABEL = "offline (no API key)"
DEFAULT_CONFIG_FILE = "~/.tierclaw/config.json"
_HINT = "(Offline mode: set provider.apiKey in {file} or TIERCLAW_PROVIDER_API_KEY for real answers.)"
_HINT_ZH = (
    "（离线模式：在 {file} 里设置 provider.apiKey，或设置环境变量 TIERCLAW_PROVIDER_API_KEY，"
    "即可得到真正的回答。）"
)
# The config itself chose the stand-in (provider.type "offline", as the trial without accounts writes):
# a key alone would not change that.
_HINT_CHOSEN = (
    '(Offline mode: provider.type is "offline" in {file}; set it to "openai" with provider.apiKey for real '
    "answers.)"
)
_HINT_CHOSEN_ZH = (
    '（离线模式：{file} 里 provider.type 是 "offline"；改成 "openai" 并设置 provider.apiKey，'
    "即可得到真正的回答。）"
)
OFFLINE_HINT = _HINT.format(file=DEFAULT_CONFIG_FILE)
OFFLINE_HINT_ZH = _HINT_ZH.format(file=DEFAULT_CONFIG_FILE)

_EN = {
    "prefix": "[offline model]",
    "memories": "What I recall that seems relevant:",
    "nothing": "I don't recall anything about that yet.",
    "kept": "I'll remember: ",
    "kept_later": "I'll remember, once this conversation goes quiet: ",
    "not_kept": "I'm only the offline stand-in, and I didn't save that.",
    "what_i_am": (
        "I'm the offline stand-in, not a language model: I can't chat or answer general questions. "
        "What you tell me about yourself is kept as a memory, and I show it when you ask about it."
    ),
    "join": "; ",
}
_ZH = {
    "prefix": "[离线模型]",
    "memories": "我想起这些可能相关的内容：",
    "nothing": "我还不记得与此相关的内容。",
    "kept": "记住了：",
    "kept_later": "这段对话告一段落后我会记住：",
    "not_kept": "我只是离线替身，这句话没有保存。",
    "what_i_am": (
        "我是离线替身，不是语言模型：没法闲聊，也回答不了一般性的问题。"
        "你说的关于自己的事会存为记忆，问起时我会列出来。"
    ),
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


def offline_hint(text: str, config_file: str | None = None, *, chosen: bool = False) -> str:
    """How to get real answers, in the language of ``text`` (the message being answered), naming the
    ``config_file`` in use (a trial's own file, not the default one) and, when the config ``chosen`` the
    offline provider, the setting that keeps it."""
    chinese = is_chinese(text)
    hints = (_HINT_CHOSEN_ZH, _HINT_CHOSEN) if chosen else (_HINT_ZH, _HINT)
    template = hints[0] if chinese else hints[1]
    return template.format(file=config_file or DEFAULT_CONFIG_FILE)


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


def promised(reply: str) -> bool:
    """Whether a reply of the stand-in promised "I'll remember: …" at once (``remembers_at_once``): what the
    assistant then extracts before the next message, without running the keeper a second time."""
    return any(f"{words['prefix']} {words['kept']}" in reply for words in (_EN, _ZH))


def asks_memory(text: str) -> bool:
    """Whether a message asks what memory could answer: a question about the person's own life or about
    themselves (``memory/retrieval/gate.py``); chit-chat and general knowledge do not."""
    return asks_about_themselves(text) or personal_question(text)


class OfflineChatModel:
    """The main model's local stand-in (``gateway.agent.ChatModel``): no network, never fails.

    ``remembers_at_once``: the memory model is the offline one too, and the assistant extracts a message
    the stand-in promised to remember before the next message (``gateway/providers.py`` says which)."""

    # Its replies are gateway notices, not conversation: they stay out of history and memory.
    stand_in = True

    def __init__(self, keeper: FactKeeper | None = None, *, remembers_at_once: bool = True) -> None:
        self.keeper = keeper or FactKeeper()
        self.remembers_at_once = remembers_at_once

    @property
    def label(self) -> str:
        return OFFLINE_CHAT_LABEL

    async def reply(self, request: ChatRequest) -> str:
        text = request.user_text
        words = _ZH if is_chinese(text) else _EN
        scheduled = await scheduled_reply(request)  # "remind me…": what was scheduled, or why not
        if scheduled is not None:
            return f"{words['prefix']} {scheduled}"
        kept = await kept_from(text, self.keeper)
        lines: list[str] = []
        if kept:
            promise = words["kept"] if self.remembers_at_once else words["kept_later"]
            lines.append(f"{words['prefix']} {promise}{words['join'].join(kept)}")
        if request.memories:
            lines.append(f"{words['prefix']} {words['memories']}")
            lines += [f"{i}. {m.content}" for i, m in enumerate(request.memories, 1)]
        if not lines:
            if looks_like_statement(text):
                said = words["not_kept"]
            else:
                said = words["nothing"] if asks_memory(text) else words["what_i_am"]
            lines.append(f"{words['prefix']} {said}")
        question = await zone_question(request)  # "I live in Tokyo": use Asia/Tokyo for reminders?
        if question:
            lines.append(f"{words['prefix']} {question}")
        return "\n".join(lines)
