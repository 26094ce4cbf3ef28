"""Quick rule-based extraction: lasting first-person facts from a user message, no model.

The memory model is the real extractor; these rules are the low-latency path beside it and the whole of
the offline model (``memory/offline_model.py``). They keep only what the user plainly states about
themselves, in Chinese or English — "My name is Alice", "I live in Berlin", "我喜欢喝咖啡", "我在字节工作",
"we decided to use Postgres", "remember that …" — and drop everything they cannot read with confidence:
questions, greetings, talk about the assistant, code, secrets, very short and very long sentences. A
missed fact costs little (the model sees the turn too); a wrong fact written to memory costs a lot.

What a fact gets:

* ``content``: the sentence as the user wrote it (trimmed), or — when a sentence states several facts
  ("I live in Lyon and work as a nurse", "我在杭州做后端开发，喜欢用Go") — each clause of it, the only
  change being the subject "I"/"我" carried into a clause that continues it ("I work as a nurse");
* ``category`` / ``importance``: identity 1.0 (name, job, where they live or work, birthday, origin,
  allergies), config 0.8 (tools, settings and stated preferences — the original design puts preferences in the
  never-decaying group: its Tier 1 example is "偏好 Go/TypeScript"), decision 0.8, event 0.5, temp 0.2
  (anything said about "today"/"今天"/"right now" that is not an identity fact);
* ``topic``: ``preferences`` for likes, dislikes, habits, favourites; ``_general`` otherwise;
* ``project``: a known project named in the sentence, else ``_global``;
* ``subject="user"`` and a ``predicate`` ("name", "lives_in", "works_at", "birthday", "occupation",
  "favourite:<x>", …) for single-valued attributes, so that a later "I moved to Paris" supersedes
  "I live in Berlin" through the engine's subject+predicate path.
"""

from __future__ import annotations

import re
import unicodedata

from memory.model.everyday_around import AROUND_RULES
from memory.model.everyday_rules import EVERYDAY_RULES
from memory.model.quick_rules import (
    DECISION,
    EVENT_RULES,
    FIRST_PERSON_START,
    IDENTITY_RULES,
    NAME_RULES,
    PREFERENCE_RULES,
    PREFERENCES_TOPIC,
    REPLY_LANGUAGE,
    UNDECIDED,
    Match,
    Rules,
)
from memory.records import GLOBAL_PROJECT, Fact
from memory.text.category import everyday_class, refine_category
from memory.text.dedup import norm_key

# Sentences longer than this are narratives or pastes, not one fact.
MAX_SENTENCE_CHARS = 200
# Sentences with fewer letters/digits/Han characters than this say nothing lasting ("ok", "我叫").
MIN_MEANINGFUL_CHARS = 4
# A Han character carries more than a letter: three of them can state a fact ("我吃素", "我养猫").
MIN_MEANINGFUL_HAN = 3

USER = "user"
IMPORTANCE = {"identity": 1.0, "config": 0.8, "decision": 0.8, "event": 0.5, "temp": 0.2}
# An explicit "remember that …" lifts a plain event to the weight of a preference.
REMEMBER_IMPORTANCE = 0.8

# --- splitting and rejecting ------------------------------------------------------------------------

# After Chinese/full-width terminators and ;!? always; after "." only before a space or the end, so that
# "Node.js", "3.5" and "e.g" stay whole.
_SPLIT = re.compile(r"(?<=[。！!？?；;])|\n|(?<=\.)(?=\s|$)")
_FENCE = re.compile(r"```.*?(?:```|$)", re.S)
_CODE = re.compile(
    r"[{}]|=>|==|!=|:=|->|\w\(\)|\w\[\w*\]|^\s*(?:def|class|import|from|return|func|var|let|const|"
    r"select|sudo|pip|npm|git)\s|^\s*[$#>]\s|\w=\w|^\s*[\w.]+\s*=\s*\S|</?\w+>"
)
_SECRET = re.compile(
    r"\b(?:password|passwd|passcode|pin|api[ _-]?key|token|secret|private key)s?\b"
    r"|密码|口令|密钥|令牌|验证码",
    re.I,
)
_EN_QUESTION_START = re.compile(
    r"^(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|was|were|am|can|could|would|"
    r"should|will|shall|may|might|have|has|had|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|can't|"
    r"couldn't|shouldn't)\b",
    re.I,
)
_ZH_QUESTION = re.compile(
    r"^(?:什么|怎么|为什么|为啥|谁|哪|是否|能不能|可不可以|要不要|是不是|有没有)|[吗呢么嘛][~～。.!！\s]*$"
)
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# Laughter marks a joke or a passing remark ("my phone is about to die lol"), not a fact to keep.
_LAUGHTER = re.compile(r"\b(?:lol|lmao|rofl|haha\w*|hehe\w*|xd)\b|哈哈|呵呵|嘻嘻|笑死", re.I)
_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b|你|您", re.I)

# --- normalising the start of a sentence --------------------------------------------------------------

_EN_FILLER = re.compile(
    r"^(?:(?:ok|okay|so|well|also|and|but|btw|by the way|oh|ah|actually|fyi|hey|hi|hello|"
    r"just so you know|for the record|fun fact|anyway|yeah|yes|no|sure|fine|alright|honestly)\b[\s,:;-]*)+"
)
_EN_TIME_LEAD = re.compile(
    r"^(?:(?:yesterday|today|tonight|recently|lately|earlier|now|currently|last (?:week|month|year|night|"
    r"weekend|time)|this (?:morning|afternoon|evening|week|month|year)|right now|"
    r"next (?:week|month|year|spring|summer|autumn|winter))\b[\s,]*)+"
)
_ZH_FILLER = re.compile(
    r"^(?:(?:哦|噢|嗯|啊|对了|另外|还有|顺便说一下|顺便说|顺便|其实|那个|好的|好吧|是的|对|所以|然后|说一下|告诉你)"
    r"[\s,，:：、]*)+"
)
_ZH_TIME_LEAD = re.compile(
    r"^(?:(?:今天|今晚|今早|昨天|昨晚|前天|上周|上个?星期|上个月|去年|最近|刚才|刚刚|现在|目前|这周|本周|"
    r"这个月|早上|上午|下午|晚上)[\s,，]*)+"
)
# "我今天不吃辣": a time word right after "我" is read like one before it (the sentence stays as said).
_ZH_TIME_AFTER_SUBJECT = re.compile(r"^(我们?)(?:今天|今晚|今早|现在|此刻|这会儿)(?=[\u4e00-\u9fff]{2})")
_EN_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|don't forget|do not forget|note|keep in mind)\b(?:\s+that)?"
    r"[\s,:;-]*(?!when\b)"
)
_ZH_REMEMBER = re.compile(r"^(?:请|你要|要)?(?:帮我)?(?:记住|记一下|记下|记着|别忘了)(?:一下)?[\s,，:：、]*")

_EN_TEMP = re.compile(
    r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening)|for now)\b", re.I
)
_ZH_TEMP = re.compile(r"今天|今晚|今早|今儿|现在|刚才|此刻|这会儿|马上|一会儿")

# Objects that point back into the conversation ("I like that") say nothing on their own.


# --- rules ---------------------------------------------------------------------------------------------


def _meaningful_chars(text: str) -> int:
    return sum(1 for ch in text if ch.isalnum())


def _too_short(text: str) -> bool:
    """Fewer meaningful characters than a fact needs (three suffice in Chinese)."""
    least = MIN_MEANINGFUL_HAN if _HAN.search(text) else MIN_MEANINGFUL_CHARS
    return _meaningful_chars(text) < least


def _is_question(sentence: str, norm: str) -> bool:
    if sentence.rstrip().endswith(("?", "？")):
        return True
    if _EN_QUESTION_START.match(norm):
        return True
    return bool(_HAN.search(norm)) and _ZH_QUESTION.search(norm) is not None


def _strip_lead(norm: str) -> str:
    """Drop leading fillers and time words ("btw,", "对了，", "yesterday", "今天") before the subject."""
    previous = None
    while previous != norm:
        previous = norm
        for pattern in (_EN_FILLER, _ZH_FILLER, _EN_TIME_LEAD, _ZH_TIME_LEAD):
            norm = pattern.sub("", norm, count=1).lstrip(" ,，、:：-")
    return _ZH_TIME_AFTER_SUBJECT.sub(r"\1", norm, count=1)


def _normalise(sentence: str) -> str:
    """Lower-case NFKC text with curly apostrophes straightened and terminal punctuation removed."""
    text = unicodedata.normalize("NFKC", sentence).replace("’", "'").replace("‘", "'").lower()
    text = re.sub(r"\s+", " ", text).strip()
    return text.rstrip(" .。!！~～;；,，…")


def _first(rules: Rules, norm: str) -> Match | None:
    for pattern, rule in rules:
        m = pattern.search(norm)
        if m is not None:
            found = rule(m)
            if found is not None:
                return found
    return None


def _classify(norm: str, *, temp: bool, remembered: bool) -> Match | None:
    """What kind of fact the normalised, filler-free sentence states; None to drop it. Order matters."""
    if REPLY_LANGUAGE.search(norm):
        return Match("config", PREFERENCES_TOPIC, "reply_language")
    found = _first(NAME_RULES, norm)
    if found is not None:
        return found
    if _SECOND_PERSON.search(norm) and not remembered:
        return None  # about the assistant, or a request to it
    found = _first(IDENTITY_RULES, norm)
    if found is not None:
        return found
    if DECISION.search(norm) and not UNDECIDED.search(norm):
        return Match("decision")
    # Something said about "today" is kept only when a rule reads a fact in it (then it is short-lived):
    # "I'm tired today" is chit-chat, and the offline stand-in must not promise to keep it.
    found = _first(PREFERENCE_RULES, norm) or _first(EVENT_RULES, norm) or _first(EVERYDAY_RULES, norm)
    found = found or _first(AROUND_RULES, norm)
    if found is not None:
        return Match("temp") if temp else found
    if remembered:
        return Match("temp") if temp else Match("event")
    return None


def _project_in(sentence: str, known_projects: frozenset[str]) -> str | None:
    """The longest known project named in the sentence (a whole word for Latin names)."""
    lowered = unicodedata.normalize("NFKC", sentence).lower()
    for name in sorted(known_projects, key=lambda p: (-len(p), p)):
        low = name.lower().strip()
        if not low or low == GLOBAL_PROJECT:
            continue
        if low.isascii():
            if re.search(rf"(?<![\w-]){re.escape(low)}(?![\w-])", lowered):
                return name
        elif low in lowered:
            return name
    return None


def _first_person(norm: str) -> bool:
    """Whether a normalised sentence starts with its speaker as subject ("我…" in Chinese, "I …"/"my …")."""
    return norm.startswith("我") if _HAN.search(norm) else bool(FIRST_PERSON_START.match(norm))


def without_filler(sentence: str) -> str:
    """The sentence without a greeting or filler before a first-person statement ("Hi, I live in Lyon"
    -> "I live in Lyon", "对了，我养了一只猫" -> "我养了一只猫"), for cutting it into clauses (a fact of one
    sentence keeps it as said). Anything else is returned as it is."""
    lowered = sentence.lower()
    if len(lowered) != len(sentence):  # lower() changed the length: offsets would not line up
        return sentence
    for pattern in (_EN_FILLER, _ZH_FILLER):
        found = pattern.match(lowered)
        if found is None or not found.end():
            continue
        rest = sentence[found.end() :].lstrip(" ,，、:：-")
        if _first_person(_normalise(rest)):
            return rest
    return sentence


def split_sentences(text: str) -> list[str]:
    """The message's sentences (fenced code removed), trimmed, separators and empty pieces dropped."""
    pieces = _SPLIT.split(_FENCE.sub("\n", text))
    return [s for s in (p.strip().rstrip(";；").strip() for p in pieces if p) if s]


def quick_fact(sentence: str, known_projects: frozenset[str] = frozenset()) -> Fact | None:
    """The lasting fact one sentence states, or None. See the module docstring for what is kept."""
    content = sentence.strip()
    if len(content) > MAX_SENTENCE_CHARS or _too_short(content):
        return None
    if _CODE.search(content) or _SECRET.search(content) or _LAUGHTER.search(content):
        return None
    norm = _normalise(content)
    temp = bool(_EN_TEMP.search(norm) or _ZH_TEMP.search(norm))
    norm = _strip_lead(norm)
    if _is_question(content, norm):
        return None
    body = _ZH_REMEMBER.sub("", _EN_REMEMBER.sub("", norm, count=1), count=1)
    remembered = body != norm
    if remembered:
        norm = _strip_lead(body)
        if _too_short(norm) or _is_question(content, norm):
            return None
    found = _classify(norm, temp=temp, remembered=remembered)
    if found is None:
        return None
    category = refine_category(found.category, norm)
    importance = IMPORTANCE[category]
    if remembered and category == "event":
        importance = REMEMBER_IMPORTANCE
    return Fact(
        content=content,
        project=_project_in(content, known_projects) or GLOBAL_PROJECT,
        topic=found.topic,
        category=category,
        importance=importance,
        subject=USER if found.predicate else None,
        predicate=found.predicate,
    )


# Where a sentence may hold several facts: commas and semicolons, and "and"/"but" before a new clause
# (captured, so that a clause glued back to the one before keeps its separator).
_CLAUSE_BREAK = re.compile(r"(\s*[，,；;、]\s*|\s+(?:and|but|and also|and then)\s+(?=\S))", re.I)
# A clause that starts with its own subject (or a filler/time word that precedes one) keeps it as it is.
_EN_OWN_SUBJECT = re.compile(
    r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|our|he|she|they|it|it's|this|that|there|the|a|an|his|her|"
    r"their|you|your|[A-Z]\w*)\b",
)
_ZH_OWN_SUBJECT = re.compile(r"^(?:我|咱|他|她|它|你|您|这|那|大家|[A-Za-z])")
# The speaker alone as the first clause's subject ("I …", "我…"; not "my wife …", "我女儿…"): only then is
# "I"/"我" the subject a following clause leaves out.
_EN_SPEAKER = re.compile(r"^(?:i|i'm|i've|i'd|i'll|we|we're|we've)\b")
_ZH_SPEAKER = re.compile(r"^(?:我|咱)(?!的|家|们家|们的)")
# A continuation describing what the clause before named ("a cat, called Pepper", "一只猫，叫橙子"):
# it stays with that clause.
_CONTINUES = re.compile(r"^(?:called|named|who|which|whose|aged)\b|^(?:叫|名叫|名字叫|今年|已经|才)", re.I)

_LEADING_AND = re.compile(r"^(?:and|but|and also|and then)\s+", re.I)


def _speaker_subject(clause: str) -> str | None:
    """ "I"/"我" when the clause's subject is the speaker alone, else None (see ``_ZH_SPEAKER``)."""
    norm = _strip_lead(_normalise(clause))
    if _HAN.search(norm):
        if not _ZH_SPEAKER.match(norm) or everyday_class(norm[1:4]) in ("people", "pets"):
            return None
        return "我"
    return "I" if _EN_SPEAKER.match(norm) else None


def split_clauses(sentence: str) -> list[str]:
    """The clauses of one sentence, each with a subject: "I live in Lyon and work as a nurse" ->
    ["I live in Lyon", "I work as a nurse"], also after a greeting ("Hi, I live in …"). A sentence
    without a first-person start is one clause; a clause without a subject of its own after one whose
    subject is not the speaker ("My wife works as a nurse and loves hiking", "我女儿叫小雨，今年五岁")
    stays with the clause before it."""
    parts = _CLAUSE_BREAK.split(without_filler(sentence.strip()))
    pieces, separators = [p.strip() for p in parts[0::2]], parts[1::2]
    if len([p for p in pieces if p]) < 2 or not _first_person(_strip_lead(_normalise(pieces[0]))):
        return [sentence.strip()]
    subject = _speaker_subject(pieces[0])
    clauses = [pieces[0]]
    for separator, piece in zip(separators, pieces[1:], strict=True):
        piece = _LEADING_AND.sub("", piece)  # "…, and I like tea"
        if not piece:
            continue
        chinese = bool(_HAN.search(piece[:1])) or piece[:1] in "我咱他她它你您"
        if (_ZH_OWN_SUBJECT if chinese else _EN_OWN_SUBJECT).match(piece):
            clauses.append(piece)
        elif subject is not None and not _CONTINUES.match(piece):
            clauses.append(("我" if chinese else "I ") + piece)
        else:
            clauses[-1] = clauses[-1] + separator + piece
    return clauses


def quick_facts(text: str, known_projects: frozenset[str] = frozenset()) -> list[Fact]:
    """Lasting first-person facts in a user message, no duplicates.

    A sentence gives one fact, or one per clause when at least two of its clauses state a fact each
    (or when only its clauses do): "I like tea and coffee" stays whole, "I live in Lyon and work as a
    nurse" gives two facts.
    """
    facts: list[Fact] = []
    seen: set[str] = set()
    for sentence in split_sentences(text):
        whole = quick_fact(sentence, known_projects)
        parts = [f for f in (quick_fact(c, known_projects) for c in split_clauses(sentence)) if f is not None]
        found = parts if len(parts) >= 2 or (whole is None and parts) else [whole] if whole else []
        for fact in found:
            key = norm_key(fact.content)
            if key not in seen:
                seen.add(key)
                facts.append(fact)
    return facts
