"""A reminder request in the person's words → what to remind them of, and when (README "Reminders").

``parse_request("remind me Friday at 9 to call the dentist", now, zone)`` finds the request words
("remind me", "提醒我"), the time words (``words_en.RULES`` or ``words_zh.RULES``, by the language of the
message), resolves them at ``now`` in the person's zone (``when.resolve``), and keeps the rest as the
reminder's text ("call the dentist"). ``parse_when`` reads time words alone (the main model's tool passes
them apart from the text), ``is_request`` says whether a message asks for a reminder at all (the offline
stand-in's question; "remind me what I ordered" is a question about memory, not a request).

English and Chinese place the time differently: in English the time words may stand anywhere ("remind me
to call mum in an hour"), so every match is a time word; in Chinese the time comes before the request
words or right after them ("明天下午三点提醒我交周报", "提醒我明天下午3点开会"), and what follows is the
text even when it holds a time word ("每周日晚上七点提醒我计划下周").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from gateway.reminders import words_en, words_zh
from gateway.reminders.when import Due, Found, Problem, resolve
from memory.text.wording import is_chinese

Rules = Sequence[tuple[re.Pattern[str], Callable[[re.Match[str]], dict[str, Any]]]]

# Request words. Strong ones ask for a reminder even without a time (then we ask when); weak ones
# ("tell me", "叫我") only together with a time ("they call me Leo" is no request).
_EN_STRONG = re.compile(
    r"\b(?:remind\s+me|set\s+(?:me\s+)?(?:a|an)\s+(?:reminder|alarm)|(?:give\s+me|make)\s+a\s+reminder|"
    r"don'?t\s+let\s+me\s+forget|do\s+not\s+let\s+me\s+forget|reminder)\b",
    re.IGNORECASE,
)
_EN_WEAK = re.compile(
    r"\b(?:tell\s+me|ping\s+me|nudge\s+me|alert\s+me|wake\s+me(?:\s+up)?|text\s+me)\b", re.I
)
_ZH_STRONG = re.compile(
    r"记得提醒我|别让我忘了?|不要让我忘了?|别让我忘记|提醒一下我|提醒我一下|提醒下我|提醒我|提醒|"
    r"(?:帮我)?(?:定|设|设置|订)(?:一)?个(?:提醒|闹钟)"
)
_ZH_WEAK = re.compile(r"叫醒我|叫我|喊我|通知我")
_EN_POLITE = re.compile(
    r"^(?:\W|hey|hi|yo|ok|okay|oh|so|please|pls|plz|kindly|can|could|would|will|you|u|and|then|also)*$",
    re.IGNORECASE,
)
_EN_LEAD = re.compile(
    r"^(?:[\s,:;.!\-–—]+|(?:to|that|about|of|for|on|at|by|and|then|please|pls|when\s+it'?s|when\s+it\s+is)\b)",
    re.IGNORECASE,
)
_EN_TAIL = re.compile(r"(?:[\s,:;.!?\-–—]+|\b(?:please|pls|thanks|thank\s+you|ok|okay)\b)$", re.IGNORECASE)
_ZH_FILLER = re.compile(r"^(?:[\s,，:：;；、。.!！~～\-—]+|的时候|时候|的时|一下)")
_ZH_TAIL = re.compile(r"(?:好吗|好不好|行吗|行不行|可以吗|谢谢你?|哈|吧|啊|呀|哦|喔|嘛|[。.!！~～?？\s,，])$")
_EN_QUESTION_AFTER = re.compile(r"^\s*(?:what|who|whom|whose|where|when|which|how|why|if|whether|of)\b", re.I)
_ZH_QUESTION = re.compile(r"什么|哪|谁|几|吗[?？。!！]*$|呢[?？。!！]*$|[?？]")


@dataclass(frozen=True, slots=True)
class Request:
    """A parsed request: the text to be reminded of, its first run (or why there is none), the
    language it was asked in ("en" or "zh") and the person's words."""

    text: str
    due: Due | Problem
    lang: str
    said: str


@dataclass(frozen=True, slots=True)
class _Hit:
    start: int
    end: int
    apply: Callable[[re.Match[str]], dict[str, Any]]
    match: re.Match[str]


def normalise(text: str) -> str:
    """NFKC (full-width digits and colons), one kind of apostrophe, no control characters."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("‘", "'")
    return "".join(ch if ch.isprintable() else " " for ch in text).strip()


def language(text: str) -> str:
    """ "zh" for a message written mostly in Chinese, else "en" (``memory.text.wording.is_chinese``)."""
    return "zh" if is_chinese(text) else "en"


def scan(text: str, rules: Rules) -> list[_Hit]:
    """Every match of ``rules`` in ``text``, each character in one match at most, by rule order."""
    taken = [False] * len(text)
    hits: list[_Hit] = []
    for pattern, apply in rules:
        at = 0
        while (match := pattern.search(text, at)) is not None:
            start, end = match.span()
            if start == end or any(taken[start:end]):
                at = start + 1  # a later, shorter match may still fit ("周一早上": not 一早, but 早上)
                continue
            for i in range(start, end):
                taken[i] = True
            hits.append(_Hit(start, end, apply, match))
            at = end
    return hits


def found_of(hits: Sequence[_Hit]) -> Found:
    """What the kept time words say (applied in rule order)."""
    found = Found()
    for hit in hits:
        for name, value in hit.apply(hit.match).items():
            setattr(found, name, value)
        found.spans.append((hit.start, hit.end))
    return found


def _trigger(text: str, lang: str) -> tuple[re.Match[str] | None, bool]:
    """The request words and whether they are strong (see ``_EN_STRONG``)."""
    strong, weak = (_ZH_STRONG, _ZH_WEAK) if lang == "zh" else (_EN_STRONG, _EN_WEAK)
    match = strong.search(text)
    if match is not None:
        return match, True
    return weak.search(text), False


def parse_request(said: str, now_local: datetime, zone: ZoneInfo) -> Request:
    """The reminder ``said`` asks for, read at ``now_local`` (the person's wall clock) in ``zone``."""
    text = normalise(said)
    lang = language(text)
    if lang == "zh":
        text = words_zh.digits(text)
        hits = scan(text, words_zh.RULES)
    else:
        hits = scan(text, words_en.RULES)
    trigger, _ = _trigger(text, lang)
    if lang == "zh":
        hits, what = _chinese_text(text, hits, trigger)
    else:
        what = _english_text(text, hits, trigger)
    return Request(what, resolve(found_of(hits), now_local, zone), lang, said.strip())


def parse_when(when: str, now_local: datetime, zone: ZoneInfo) -> Due | Problem:
    """Time words alone ("Friday 9am", "in 20 minutes", "明天下午三点", "2026-11-28 09:00")."""
    text = normalise(when)
    iso = _iso_local(text)
    if iso is not None:
        found = Found(month_day=(iso.year, iso.month, iso.day), hour=iso.hour, minute=iso.minute)
        found.spans.append((0, len(text)))
        return resolve(found, now_local, zone)
    if language(text) == "zh":
        return resolve(found_of(scan(words_zh.digits(text), words_zh.RULES)), now_local, zone)
    return resolve(found_of(scan(text, words_en.RULES)), now_local, zone)


def is_request(said: str) -> bool:
    """Whether a message asks for a reminder: strong request words with a time, or with what to be
    reminded of ("remind me to call mum" — then we ask when); weak ones ("tell me to…") with a time.
    "Remind me what I ordered" asks memory, not for a reminder."""
    text = normalise(said)
    lang = language(text)
    trigger, strong = _trigger(text, lang)
    if trigger is None:
        return False
    if lang == "zh":
        text = words_zh.digits(text)
        hits, what = _chinese_text(text, scan(text, words_zh.RULES), trigger)
    else:
        hits = scan(text, words_en.RULES)
        what = _english_text(text, hits, trigger)
    if hits:
        return True
    if not strong or not what:
        return False
    if lang == "zh":
        return not _ZH_QUESTION.search(what)
    after = text[trigger.end() :]
    return not _EN_QUESTION_AFTER.match(after) and "?" not in after


def _english_text(text: str, hits: Sequence[_Hit], trigger: re.Match[str] | None) -> str:
    """What is left once the request and time words are gone; words before the request that are only
    politeness ("hey, can you…") go too."""
    cut = sorted([(h.start, h.end) for h in hits] + ([trigger.span()] if trigger else []))
    pieces, at = [], 0
    for start, end in cut:
        pieces.append((at, text[at:start]))
        at = max(at, end)
    pieces.append((at, text[at:]))
    if trigger is not None:
        before = " ".join(p for s, p in pieces if s < trigger.start())
        if _EN_POLITE.match(before):
            pieces = [(s, p) for s, p in pieces if s >= trigger.start()]
    return _trim(" ".join(p.strip() for _, p in pieces if p.strip()), _EN_LEAD, _EN_TAIL)


def _chinese_text(text: str, hits: list[_Hit], trigger: re.Match[str] | None) -> tuple[list[_Hit], str]:
    """The time words that count and the text: after the request words, the time words right after
    them, then the text (time words inside it are part of it); before them, time words and fillers."""
    if trigger is None:
        kept = hits
        rest = "".join(ch for i, ch in enumerate(text) if not any(h.start <= i < h.end for h in hits))
        return kept, _trim(rest, _ZH_FILLER, _ZH_TAIL)
    at = trigger.end()
    starts = {h.start: h for h in hits}
    while True:
        filler = _ZH_FILLER.match(text[at:])
        if filler and filler.end():
            at += filler.end()
        elif at in starts:
            at = starts[at].end
        else:
            break
    kept = [h for h in hits if h.end <= trigger.start() or trigger.end() <= h.start < at]
    what = _trim(text[at:], _ZH_FILLER, _ZH_TAIL)
    if not what:  # "交周报，明天下午三点提醒我": the text came first
        before = "".join(
            ch for i, ch in enumerate(text[: trigger.start()]) if not any(h.start <= i < h.end for h in kept)
        )
        what = _trim(before, _ZH_FILLER, _ZH_TAIL)
    return kept, what


def _trim(text: str, lead: re.Pattern[str], tail: re.Pattern[str]) -> str:
    text = " ".join(text.split())
    while True:
        start = lead.match(text)
        end = tail.search(text)
        if start and start.end():
            text = text[start.end() :].strip()
        elif end and end.start() < len(text):
            text = text[: end.start()].strip()
        else:
            return text


def _iso_local(text: str) -> datetime | None:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?", text):
        return None
    try:
        return datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError:
        return None
