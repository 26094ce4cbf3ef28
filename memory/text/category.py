"""Which category a memory is filed in, and so how it fades (docs/architecture.md, "Tiers"; the curves are
``memory/retrieval/decay.py``). The guide, which the learned head (``memory/head/``) was trained on and
the labelled sets of ``bench/data`` are labelled by:

* ``identity`` (never fades): who the person is — name, age, birthday, origin, where they live,
  nationality, languages, job and employer, what they studied, marital status;
* ``config`` (never fades): what stays true of how they live and what the assistant must respect — tastes,
  diet, allergies, health conditions and medication, routines and habits, hobbies kept up, devices and
  tools, household arrangements (the car, where things are kept, bills, bin day), how to be answered;
* ``decision`` (fades slowly, to 30 %): plans, goals, intentions, decisions, appointments, things weighed;
* ``event`` (fades to 10 %): what happened or is happening — past events, news, milestones, trips taken,
  what went wrong this morning — and facts about the people and pets around them (a daughter's birthday, a
  friend's job, the dog's breed and habits);
* ``temp`` (fades to nothing): only true now — where one is, what one is doing, how one feels, the state
  of things today, tonight or this week ("I'm working from home today", "on the bus", "the wifi's down");
  what is booked for a later day is a decision;
* ``credential``: where a secret or account is kept (never the secret).

With the shipped embedder the head decides; ``fallback_category`` is the keyword-only rule (short and
general, no word list of any set), and ``category_for`` files what is written without a category
(``memory add``, ``/remember``, the memory page, a model fact without a valid one). Pure functions.
"""

from __future__ import annotations

import re

IDENTITY, CONFIG, DECISION, EVENT, TEMP, CREDENTIAL = (
    "identity",
    "config",
    "decision",
    "event",
    "temp",
    "credential",
)

# A secret's name: one list for filing (``category_for``, ``fact_fields.fact_of``) and for the offline
# keeper's refusal of a value (``quick_extract.holds_secret``) — not the words that are mostly something
# else ("a rolling pin", "keep it secret"); "PIN" in capitals (beside Han too: "银行卡PIN是…"),
# lower case only as one's or a card's, before what a PIN is said with ("my pin is …"). The answer to a
# security question opens an account as a password does ("my security answer is …", 密保答案): a secret too;
# so does a login, the noun ("my netflix login is …", 登录账号; round 47) — not the verb ("I login at 9",
# "to log in", "登录").
SECRET_NAME = re.compile(
    r"(?i:\b(?:pass(?:word|wd|code|phrase)|pwd?|pin (?:code|number)|api[ _-]?key|access key|private key"
    r"|(?<!\bi )(?<!\bwe )(?<!\bto )log-?in|logon|credential"
    r"|token|client secret|secret key|(?:door|gate|alarm|safe|lock) code"
    r"|(?:security|secret)[ -](?:question|answer)|memorable (?:word|info(?:rmation)?))s?\b"
    r"|(?:^|\b(?:my|our|the|bank|card|atm|sim|phone|debit|credit)\s+)pins?(?=\s*(?:is|was|['’]s|[:=：]|\d)))"
    r"|(?<![A-Za-z])PINs?(?![A-Za-z])|密码|口令|密钥|令牌|验证码|门禁码|开锁码|密保(?:问题|答案)|安全(?:提示)?问题的?答案"
    r"|登[录陆](?:账号|帐号|名|信息)"
)
# Checked in order; the first that matches files the statement.
_FALLBACK: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        TEMP,
        re.compile(
            r"\b(?:today|tonight|right now|at the moment|this (?:morning|evening))\b|今天|今晚|现在|此刻",
            re.I,
        ),
    ),
    (
        DECISION,
        re.compile(
            r"\b(?:want to|going to|plan(?:ning)? to|decided|will|'ll|thinking (?:of|about)|hope to|goal)\b"
            r"|打算|计划|准备|决定|想要|考虑|目标|约了",
            re.I,
        ),
    ),
    (
        CONFIG,
        re.compile(
            r"\b(?:like|love|hate|prefer|always|never|usually|every|allergic)\b"
            r"|喜欢|爱|讨厌|不吃|不喝|每天|每周|总是|过敏|习惯",
            re.I,
        ),
    ),
    (
        EVENT,
        re.compile(
            r"\b(?:was|were|went|got|had|did|used to|my \w+ (?:is|are|has))\b"
            r"|了$|过|去年|上个?月|以前|^我的?(?:爸|妈|老|女|儿|哥|姐|弟|妹)",
            re.I,
        ),
    ),
    (
        IDENTITY,
        re.compile(
            r"^(?:i(?:'m| am) (?:a|an|from|\d)|i (?:live|work|study)|my name)\b"
            r"|^我(?:是|叫|住|在.{1,10}(?:工作|上班|读))",
            re.I,
        ),
    ),
)


def fallback_category(text: str) -> str:
    """The keyword-only category of a statement (``event`` when no rule says otherwise)."""
    for category, pattern in _FALLBACK:
        if pattern.search(text):
            return category
    return EVENT


def names_secret(text: str) -> bool:
    """Whether ``text`` names a secret (a password, a key, 密码 …): a memory that does is where one is kept,
    filed ``credential`` by every path that keeps one (a value is never kept: ``quick_extract.holds_secret``
    and the memory model's prompt)."""
    return bool(SECRET_NAME.search(text))


def category_for(text: str) -> str:
    """The category of a memory written without one: a secret's whereabouts → credential, else the
    keyword-only rule."""
    return CREDENTIAL if names_secret(text) else fallback_category(text)
