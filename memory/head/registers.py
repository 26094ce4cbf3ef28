"""Statements as people type them in a chat app, made from clean ones (issue 35, round 3): the subject
left out.

The persona corpora say nearly every fact with its subject: 496 of XPersona's 527 Chinese persona
sentences begin with "我", 4,300 of 4,532 English ones with "I"/"my". In a chat the subject is usually
left out ("有两只狗了", "父亲是农民哈", "have two dogs lol", "favorite food is pizza"), and the chatter the
head learns "not kept" from (LCCC, the dialogue clauses labelled chatter, which never begin with "I"/"我")
is subjectless too — so a head trained on the corpora as they are reads "no 我" as "chit-chat" and drops
a casual Chinese fact. ``dropped_subject`` gives the same fact without its subject, with a particle or a
chat tail, so that the subject stops being the cue. Deterministic given the generator.
"""

from __future__ import annotations

import random
import re

_ZH_SUBJECT = re.compile(r"^(?:我的|我(?!们|自己))")
# "I"/"my" the casual register drops: "I have two dogs" → "have two dogs", "my dog is…" → "dog is…".
_EN_SUBJECT = re.compile(r"^(?:i|my)\s+(?=\w)", re.I)
_EN_CONTRACTED = re.compile(r"^i(?:'m| am)\s+", re.I)
_EN_ARTICLE = re.compile(r"^(?:a|an|the)\b", re.I)
# Particles and tails a WeChat line ends with; a lead that opens one.
_ZH_TAILS = ["了", "呢", "啊", "哈", "嘛", "啦", "哦", "哈哈", "哈哈哈", "😂", "~", "", "", ""]
_ZH_LEADS = ["跟你说哦，", "话说", "哎，", "对了，", "嗯，", "", "", "", "", ""]
_EN_TAILS = [" lol", " haha", " tbh", " ngl", " lmao", " 😂", "!!", "", "", ""]
_EN_LEADS = ["ok so ", "oh and ", "btw ", "fyi ", "", "", "", "", "", ""]


def _zh_dropped(text: str, rng: random.Random) -> str | None:
    body = text.strip().rstrip("。.!！")
    # "我家…" is one word: without the speaker it is "家里…" ("我家孩子…" → "家里孩子…").
    dropped = re.sub(r"^我家(?!里)", "家里", body, count=1) if body.startswith("我家") else body
    dropped = _ZH_SUBJECT.sub("", dropped, count=1)
    if dropped == body or len(dropped) < 3:
        return None
    tail = rng.choice(_ZH_TAILS)
    if tail == "了" and dropped.endswith("了"):
        tail = ""
    return rng.choice(_ZH_LEADS) + dropped + tail


def _en_dropped(text: str, rng: random.Random) -> str | None:
    body = text.strip().rstrip(".!")
    if _EN_CONTRACTED.match(body):  # "I'm a nurse" → "im a nurse", "I'm allergic to…" → "allergic to…"
        rest = _EN_CONTRACTED.sub("", body, count=1)
        dropped = "im " + rest if _EN_ARTICLE.match(rest) else rest
    else:
        dropped = _EN_SUBJECT.sub("", body, count=1)
    if dropped == body or len(dropped.split()) < 2:
        return None
    dropped = dropped.replace("'", "") if rng.random() < 0.5 else dropped
    return (rng.choice(_EN_LEADS) + dropped[0].lower() + dropped[1:] + rng.choice(_EN_TAILS)).strip()


def dropped_subject(text: str, lang: str, rng: random.Random) -> str | None:
    """The statement without its subject ("我"/"我的", "I"/"my"), typed casually; None when it has none
    to drop (it does not begin with the speaker) or too little is left."""
    return _zh_dropped(text, rng) if lang == "zh" else _en_dropped(text, rng)


# Round 7: how a fact sits inside chatter in a chat app — a reaction before it, a lead, or chatter after it.
_ZH_CHAT_JOINS = ["，", " ", "。", "！", "～", "，对了", " 话说"]
_EN_CHAT_JOINS = [" ", ", ", ". ", " anyway ", " but ya ", " oh and "]


def in_chatter(fact: str, chatter: str, lang: str, rng: random.Random) -> str:
    """The fact said inside chatter ("笑死 对了 下个月打算裸辞了", "lmaooo anyway got a puppy"): the
    casual registers rarely send a fact alone, so the head must keep it with a reaction around it."""
    joins = _ZH_CHAT_JOINS if lang == "zh" else _EN_CHAT_JOINS
    chatter = chatter.rstrip("。.!！?？")
    if rng.random() < 0.6:
        return chatter + rng.choice(joins) + fact
    return fact + rng.choice(joins[:3]) + chatter
