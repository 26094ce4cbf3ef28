"""``should_retrieve``: does this message need long-term memory? The cheap first step, pure rules, no I/O.

The seed's ``shouldRetrieve`` (docs/architecture.md, "Retrieval") stays the name and the first step, but
it now holds only what a rule can know: an empty or very short message, a greeting, thanks or a bare
acknowledgement, emoji alone, a command, code. Whether the rest is about the person's own life is judged
by the learned head on the query vector retrieval computes anyway (``memory/head/``, issue 35), and what
is finally shown by the relevance floor (``ranking.RelevanceFloor``).

Without the embedder (``--embedding none``, or no local model) short general rules stand in for the head
(``learned=False``): a message that names a known project or recalls the past, speaks of the person
("I"/"my"/"我") and asks or tells something at length, or asks a short question about a thing or someone
(``topic_question``); ``personal_question`` says whether it asks about the person's own life.
``asks_about_themselves`` ("what do you know about me?") is answered with an overview, not a search.
bench/gate.py measures all of them.
"""

from __future__ import annotations

import re

from memory.text.script import to_simplified
from memory.text.text_emoji import without_text_emoji
from memory.text.tokenizer import STOP_WORDS

# Messages shorter than this (characters, stripped) never need memory (the seed: len < 5); Chinese says
# in three characters what English says in five ("我住哪").
MIN_CHARS = 5
ZH_MIN_CHARS = 3
# Keyword-only: a message about the person's own things ("my …") this long tells something of their life
# (a bare "I" is most of small talk: "I think so", "I'm not sure what you mean").
EN_NARRATIVE_WORDS = 10
ZH_NARRATIVE_HAN = 10
# A question about one's own life is short: a longer message is conversation with a question in it.
PERSONAL_QUESTION_WORDS = 20
PERSONAL_QUESTION_HAN = 30

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_CODE_LINE = re.compile(
    r"^\s*(?:[{}()\[\];]|(?:def|class|import|from|return|if|for|while|func|var|let|const)\b)"
)
# Greetings, thanks and acknowledgements, the whole message (case-insensitive, punctuation stripped).
_SMALL = re.compile(
    r"^(?:(?:hi|hey|hello|hiya|yo|morning|good (?:morning|afternoon|evening|night)|night|bye|goodbye|"
    r"see (?:you|ya)|thanks?|thank you|thx|cheers|ok|okay|yes|no|yep|nope|sure|cool|nice|great|fine|"
    r"alright|got it|done|next|continue|go on|right)(?: (?:so much|a lot|very much|there|again|you))*"
    r"|你好|您好|嗨|哈喽|早|早上好|早安|午安|晚上好|晚安|再见|拜拜|谢谢|多谢|谢啦|谢谢你|好的?|嗯+|哦+|行|可以|收到|"
    r"明白|知道了|没问题|继续|确认)$",
    re.I,
)
_NOT_WORDS = re.compile(r"[\W_]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")

# --- keyword-only fallback ---------------------------------------------------------------------------
_EN_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|our|us)\b", re.I)
_EN_POSSESSIVE = re.compile(r"\b(?:my|mine|our|ours)\b", re.I)
# A pronoun that points into the conversation ("what is it?", "那是什么？"): the question is about what
# was just said, not about the person's life.
# A capitalised word inside the sentence: a name ("What did Caroline research?").
_EN_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?!I\b|I'|OK\b)[A-Z][a-z]+")
_DEICTIC = re.compile(r"\b(?:it|this|that|these|those|there)\b|这|那|它", re.I)
# What a Chinese question is made of besides its topic: question words, particles, copulas.
_ZH_FUNCTION = re.compile(
    "为什么|为啥|什么|怎么|多少|哪儿|哪里|哪个|可以|一下|[哪谁几啥吗呢吧啊呀嘛么了的是在有没不就还都也会能要]"
)
_ZH_FIRST_PERSON = re.compile("我|咱")
# The past recalled, or what the person said earlier asked back ("what did I tell you about X and Y?").
_EN_RECALL = re.compile(
    r"\b(?:remember|recall|remind|forgot|last (?:time|week|month|year)|yesterday|ago|told you|mentioned|"
    r"(?:did|have) i (?:tell|say|mention)|i (?:said|told))\b",
    re.I,
)
_ZH_RECALL = re.compile("记得|提醒我|忘了|说过|上次|之前|以前|昨天|前几天|上周|上个月|去年")
# How a question is formed, not what it is about (whether it is about the person's own life is the head's
# call). English: a question mark; a question word first, also typed without its apostrophe ("whats",
# "howd"), or after a preposition ("since when", "at what age"); a question word last ("living where",
# "how much again"; not "no matter what", "that's where"); "… or not"; a question inside a sentence after
# forgetting or wondering ("I forget where …", "not sure whether …", Scots "cannae mind what …", not "keep in
# mind when …"); asking to be told ("remind me what …", "tell me my …", "remind me of Jo's …") or to have
# one's own thing looked up ("pull up my …", "show me our …").
_EN_ASKS = re.compile(
    r"\?|^\s*(?:(?:what|when|where|who|why|how)(?:s|d)?|whom|whose|which|am|do|did|does|is|are|have|has|"
    r"was|were|can|should)\b"
    r"|^\s*(?:at|in|on|for|since|until|till|by|from|with|to)\s+(?:what|which|when|where|who|whom|how)\b"
    r"|(?<!\bmatter )(?<!\bthat's )(?<!\bthats )\b(?:what|where|when|which|who|how much|how many|how long)"
    r"(?:\s+(?:again|now|already))?[\s.!]*$"
    r"|\bor not\b[\s.!]*$"
    r"|\b(?:forget|forgot|forgotten|remember|recall|(?<!\bin )mind|wonder|wondering|sure)\s+"
    r"(?:what|where|when|which|who|whose|how|whether|if)\b"
    r"|^\s*(?:pls |please )?(?:(?:remind|tell|give|show|send|find|get) me(?: again)?\s+(?:of\s+|about\s+)?"
    r"|(?:pull|look) up\s+)(?:what|where|when|which|who|whose|how|whether|if|my|our"
    r"|(?!(?:it|that|there|here|he|she|this|what|who|where|let)['’]s)[\w-]+['’]s)\b",
    re.I,
)
# Chinese: a mark; a question word or particle (regional ones too: 么子, 伐, 冇; 咋 before a verb, not "不咋"
# or "没咋" "not much", "咋咋呼呼", nor Cantonese's closing 咋; Cantonese 有冇, 咩, 乜, 点样/点解, 定系
# "or", 边 "which/where" before a measure word or after 喺/去/住); the A-not-A form in the last clause
# ("吃不吃辣", "换没换", Cantonese "食唔食"; not "不错不错"); a done-verb then 没/没有/未 at the end ("办了
# 没", "到咗未", "退咗钱未"; southwestern Mandarin's 没得 for 没有: "整好了没得"); a verb then 不 at the end
# ("能吃辣不"; not "我不", a refusal); "A 还是 B" in the last clause (also read, wrongly, in a statement with
# 还是 "still": "还是那么多"); asking first to be told or to have it looked up ("跟我说一下…", "给我说说…",
# "帮我查下…"; not "提醒我…", which mostly sets a reminder, nor "告诉我妈了", "帮我查了下", "跟我说下周…").
_ZH_CLAUSE_CHAR = r"[^，,。.!！;；\s]"  # a character inside one clause: no comma, stop or space
_ZH_CLAUSE_END = _ZH_CLAUSE_CHAR + "*$"
_ZH_TAIL = r"[\s啊呀呢嘛啦哦咯哈]*$"
_ZH_ASKS = re.compile(
    r"^\s*(?:你|请|麻烦你?)?再?(?:[跟给]我说(?:说|一下|一哈|下(?![周午个次礼星月]))|帮我查(?![了出过到完]))"
    r"|[?？]|[吗呢么]\s*$|什么|啥|哪|谁|几|多少|多大|多久|是不是|有没有|么子|(?<![不没咋])咋(?![咋，,。.!！;；\s]|$)"
    r"|有冇|咩|乜|点样|点解|点算|定系|边(?:度|个|间|位|款|样|处|条|只|张|部|日|次|份|种|啲|科|所)|[喺去住]边"
    + _ZH_TAIL
    + r"|(?<![不唔])([^\W\d_不没唔])[不没唔]\1"
    + _ZH_CLAUSE_END
    + r"|(?:伐|冇|[了过完好咗掂](?:没[有得]?|未)|咗"
    + _ZH_CLAUSE_CHAR
    + r"*未|[^\W\d_不没也都还就才并我你他她它们]不)"
    + _ZH_TAIL
    + r"|[^\W\d_，,。.!！;；\s]还是"
    + _ZH_CLAUSE_CHAR
    + "+$"
)
# Asking to be told or to have something looked up, before what is asked about (``personal_question``). Not
# "remind me": what one is reminded of is one's own; nor "tell me who/what …", read as one's own since
# round 37 ("Tell me who the lake property belongs to").
_REQUEST_OPENER = re.compile(
    r"^\s*(?:pls |please )?(?:(?:tell|give) me(?: again)?\s+(?:about\s+)?"
    r"(?!(?:what|where|when|which|who|whose|how|whether|if)\b)"
    r"|(?:show|send|find|get) me(?: again)?\s+(?:about\s+)?|(?:pull|look) up\s+)"
    r"|^\s*(?:你|请|麻烦你?)?再?(?:[跟给]我说(?:说|一下|一哈|下)|帮我查(?:查|一下|一哈|下)?)",
    re.I,
)
# The listener addressed ("what are your plans?", "你呢？"), and suggestions ("shall we…?", "why don't we…?").
_LISTENER = re.compile(r"\b(?:you|your|yours|you're|you've|you'd)\b|你|您", re.I)
_SUGGESTION = re.compile(
    r"\b(?:shall we|why don't we|how about|what about|let's|should we)\b|要不要|咱们去", re.I
)
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s+|$)(?=\S)")

# A person asking for everything the assistant knows of them: answered with the profile and the memories
# that weigh most, not with text matches for "know" and "me".
_EN_OVERVIEW = re.compile(
    r"\bwhat (?:do|did) you (?:know|remember|recall) about me\b|\bwhat have i told you\b|"
    r"\btell me (?:about|what you know about) (?:me|myself)\b|\bwhat do you know of me\b|"
    r"\bhow (?:well|much) do you know (?:about )?me\b|\bwho am i\b",
    re.I,
)
_ZH_OVERVIEW = re.compile(
    "你(?:都|还)?(?:记得|知道|了解)(?:关于)?我(?:的)?(?:什么|哪些|多少|些什么)|关于我你(?:都|还)?(?:知道|记得|了解)|"
    "我(?:都|之前)?(?:跟|和|对)你说过(?:些)?(?:什么|哪些)|你对我(?:有多|的)?了解|你了解我(?:吗|多少)|我是谁"
)


def asks_about_themselves(text: str) -> bool:
    """True for "what do you know about me?" / "你记得我什么？": a request for an overview of the person."""
    text = to_simplified(text)  # the patterns are Simplified; Traditional is read as its twin
    return bool(_EN_OVERVIEW.search(text) or _ZH_OVERVIEW.search(text))


def _prose(text: str) -> str | None:
    """The message without fenced code, or None when nothing in it can need memory (too short, a greeting,
    thanks, an acknowledgement, emoji alone — a chat app's text emoji too, "谢谢[抱拳]" — a command, mostly
    code)."""
    stripped = without_text_emoji(text).strip()
    if len(stripped) < (ZH_MIN_CHARS if _HAN.search(stripped) else MIN_CHARS) or stripped.startswith("/"):
        return None
    bare = _NOT_WORDS.sub(" ", stripped.lower()).strip()
    if not bare or _SMALL.match(bare):
        return None
    without = _FENCE.sub(" ", stripped)
    lines = [ln for ln in stripped.splitlines() if ln.strip()]
    code_lines = sum(1 for ln in lines if _CODE_LINE.match(ln))
    if len(without.strip()) < 0.4 * len(stripped) or (len(lines) >= 3 and code_lines > len(lines) / 2):
        return None
    return without


def should_retrieve(
    text: str,
    known_projects: frozenset[str] | set[str] = frozenset(),
    *,
    learned: bool = False,
    topics: bool = True,
) -> bool:
    """True when the message may need long-term memory. ``learned``: the head judges what the rules let
    through, so only what a rule can know is refused here; otherwise the keyword-only rules decide.
    ``topics``: whether a short question about a thing or someone (``topic_question``) counts — without
    the head it must; beside the head, which judges questions, the assistant leaves it out."""
    prose = _prose(to_simplified(text))
    if prose is None:
        return False
    if learned:
        return True
    lowered = prose.lower()
    if any(to_simplified(p).lower() in lowered for p in known_projects if p):
        return True
    if personal_question(prose) or (topics and topic_question(prose)):
        return True
    if _HAN.search(prose):
        return bool(_ZH_RECALL.search(prose)) or (
            bool(_ZH_FIRST_PERSON.search(prose)) and len(_HAN.findall(prose)) >= ZH_NARRATIVE_HAN
        )
    if _EN_RECALL.search(prose):
        return True
    if _EN_ASKS.search(prose) and _EN_NAME.search(prose) and _short_question(prose):
        return True  # a question about someone by name
    return bool(_EN_POSSESSIVE.search(prose)) and len(_WORD.findall(prose)) >= EN_NARRATIVE_WORDS


def asks(text: str) -> bool:
    """The message asks something (a question mark, a question word, 吗/呢)."""
    text = to_simplified(text)
    return bool((_ZH_ASKS if _HAN.search(text) else _EN_ASKS).search(text))


def to_listener(text: str) -> bool:
    """The message addresses the listener or suggests something ("what are your plans?", "shall we
    go?"), unless it asks them to recall ("do you remember where I parked?")."""
    text = to_simplified(text)
    recalls = _EN_RECALL.search(text) or _ZH_RECALL.search(text)
    return bool((_LISTENER.search(text) or _SUGGESTION.search(text)) and not recalls)


def _short_question(prose: str) -> bool:
    """One short sentence, not to the listener."""
    words = len(_WORD.findall(prose)) + len(_HAN.findall(prose))
    return words <= PERSONAL_QUESTION_WORDS and not _SENTENCE_END.search(prose) and not to_listener(prose)


def personal_question(text: str) -> bool:
    """Keyword-only: a short question about the person's own life ("can I eat prawns?", "my boss?",
    "我老板？"), not one to the listener. With the embedder the head answers this (``Head.asks_own``). The
    "me" of a request to be told is who is told, not what is asked about ("tell me Einstein's birthday",
    "帮我查下明天天气"): it counts only when the rest speaks of the person ("tell me my cousin's address")."""
    prose = to_simplified(text).strip()
    topic = _REQUEST_OPENER.sub("", prose, count=1)
    if _HAN.search(prose):
        short = len(_HAN.findall(prose)) <= PERSONAL_QUESTION_HAN and not to_listener(prose)
        return short and bool(_ZH_ASKS.search(prose) and _ZH_FIRST_PERSON.search(topic))
    return _short_question(prose) and bool(_EN_ASKS.search(prose) and _EN_FIRST_PERSON.search(topic))


def topic_question(text: str) -> bool:
    """Keyword-only: a short question about a thing or someone of a life, said without "my" ("what's the
    parrot's name?", "when is Mia's recital?", "甜甜几年级了？") — one sentence, not to the listener, not
    about what was just said ("what is it?"), naming something (a content word; in Chinese two characters
    beside question words and particles). Without the head nothing tells it from a question about the
    world ("what's the capital of France?"); the search finds nothing of the person's for those."""
    prose = to_simplified(text).strip()
    if not _short_question(prose) or _DEICTIC.search(prose):
        return False
    if _HAN.search(prose):
        return bool(_ZH_ASKS.search(prose)) and len(_HAN.findall(_ZH_FUNCTION.sub("", prose))) >= 2
    words = [w.lower().split("'")[0].split("’")[0] for w in _WORD.findall(prose)]
    return bool(_EN_ASKS.search(prose)) and any(w not in STOP_WORDS for w in words)
