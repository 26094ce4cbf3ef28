"""Chinese gate rows of round 19 (issue 35, zh35): Chinese statements about one's people and things said
without 我 or in passing inside a request or complaint ("tell"), their counterparts with no lasting personal
fact ("other"), and plain own questions ("own").

Why (DATA_CARD "Round 19, Chinese gate"): English got its own gate with written dated statements (round 17,
``dated.py``) and plain first-person questions (round 18, ``own_asked.py``); Chinese still used the shared
gate of 2026.12-13g, which had seen no written Chinese "tell" row of those kinds. On the newer Chinese dev
sets a fact said in passing — "帮我写个请假条，老婆下周三复查", "烦死了，物业费又涨了" — or a dated statement
about one's people without 我 ("闺女每周六上钢琴课") fell under the gate's tell threshold. These rows are
those kinds, written, for a Chinese gate of its own (``train --gate-only HEAD --gate-languages zh
--zh-told``, ``language_gate.own_gates``).

Rows made here (gate only, like ``dated.py``: ``keep`` and ``category`` unknown, so the keep and category
networks never see them; sources ``gate-zh-told-<group>`` etc., so ``calibrate.trusted`` leaves them out
and the thresholds are still chosen on the rows a person labelled): ``zh_told_written.json``'s forms by
group, filled from its slot lists (a slot may hold slots), the forms of a group taken in turn, a casual
lead (对了，/话说/害，) and tail (哈/啦/呢/嘛/～/emoji) drawn for each. Rows too near a text the project
must never train on (``near``: every bench/data/*.json text, LoCoMo, MADial, LCCC's held-out half) are
dropped by ``screened``.

Written for this purpose (zh35) from general knowledge; no evaluation set opened or paraphrased.
Deterministic given the seed; off unless ``ON`` (``train --zh-told``).

Round 26 (DATA_CARD "Round 26, Chinese gate rows in regional Mandarin"): ``zh_regional_written.json``'s
questions in regional registers — 四川/重庆, 东北, 湖南/湖北, 广东-influenced, 北方/北京, 台湾 usage
and casual standard Mandarin: subjectless, no question mark, A-not-A (办没办, 交了没有), either/or
(…还是…), …来着, fragments — about one's own life as "own" (``gate-zh-regional-own``) and the same
registers about the world as "other" (``gate-zh-regional-other``), so the gate learns the question's
subject, not the dialect word. Gate only and untrusted as round 19's rows, screened the same way; off
unless ``REGIONAL`` (``train --zh-regional``), independent of ``ON``.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example

SOURCE = "gate-zh-"
WRITTEN = Path(__file__).with_name("zh_told_written.json")
# Rows made per group (fewer if the group's forms cannot make that many distinct texts).
COUNTS = {
    "tell": {"dated": 220, "people": 70, "health": 45, "pets": 35, "plans": 40, "passing": 140},
    "other": {"requests": 90, "complaints": 60, "public": 90},
}
OWN_ROWS = 150
CASUAL_SHARE = 0.5
# A row whose character similarity (difflib ratio) to a screened text is at least this is dropped.
NEAR = 0.75
# Round 19's rows in a training run (``train.training_examples``); ``train --zh-told`` sets it.
ON = False
# Round 26: the regional questions, rows per label; in a training run when ``REGIONAL`` (``--zh-regional``).
REGIONAL_WRITTEN = Path(__file__).with_name("zh_regional_written.json")
REGIONAL_COUNTS = {"own": 200, "other": 200}
REGIONAL = False
# A form already ending in one of these (a 语气词 or an A-not-A's end) takes only a mark, an emoji or nothing.
_PARTICLE_END = tuple("嗦齁吼喔哦嘛噻呢啊咧哈呀不没冇未么吗吧欸撒哇嘞咯着")

_SLOT = re.compile(r"\{(\w+)\}")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def zh_told_written() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(WRITTEN.read_text(encoding="utf-8"))
    return data


def _fill(form: str, slots: dict[str, list[str]], rng: random.Random) -> str:
    text = form
    for _ in range(6):  # slots hold slots ({when} → "{date}上午" → "{m}月{d}号上午")
        if not _SLOT.search(text):
            break
        text = _SLOT.sub(lambda m: rng.choice(slots[m.group(1)]), text)
    return text


def _shown(text: str, slots: dict[str, list[str]], rng: random.Random, tell: bool) -> str:
    """Typed in a chat half the time: a lead and a tail (语气词, an emoji, no full stop; "，记一下" only on a
    statement to keep); else a full stop as written."""
    if rng.random() < CASUAL_SHARE:
        tails = [t for t in slots["tail"] if tell or not t.startswith("，")]
        return (rng.choice(slots["lead"]) + text + rng.choice(tails)).strip()
    return text if text.endswith(("。", "？", "！")) else text + "。"


def _made(forms: list[str], n: int, slots: dict[str, list[str]], rng: random.Random, label: str) -> list[str]:
    """``n`` distinct texts (fewer if the forms cannot make them), the forms taken in turn."""
    out: dict[str, None] = {}
    tries = 0
    while len(out) < n and tries < n * 20:
        text = _fill(forms[tries % len(forms)], slots, rng)
        tries += 1
        if label == "own":
            casual = rng.random() < CASUAL_SHARE
            lead = rng.choice(slots["lead"]) if casual else ""
            text = lead + text + rng.choice(["？", "", "啊？", "呀", "？？", "嘞"] if casual else ["？"])
        else:
            text = _shown(text, slots, rng, label == "tell")
        out.setdefault(text, None)
    return list(out)


def zh_rows(seed: int = SEED) -> list[Example]:
    """Every round-19 row before the screen: "tell" and "other" by group, then "own"."""
    data = zh_told_written()
    slots: dict[str, list[str]] = data["slots"]
    rows: list[Example] = []
    for label, groups in COUNTS.items():
        for group, n in groups.items():
            rng = random.Random(f"{seed}-{SOURCE}{label}-{group}")
            texts = _made(data[label][group], n, slots, rng, label)
            rows += [Example(t, "zh", f"{SOURCE}{label}-{group}", None, None, label) for t in texts]
    rng = random.Random(f"{seed}-{SOURCE}own")
    own = _made(data["own"], OWN_ROWS, slots, rng, "own")
    return rows + [Example(t, "zh", f"{SOURCE}own", None, None, "own") for t in own]


def _asked(forms: list[str], n: int, slots: dict[str, list[str]], rng: random.Random) -> list[str]:
    """``n`` distinct questions (fewer if the forms cannot make them), the forms taken in turn: typed
    casually half the time — a lead (欸，/问哈，/话说) and a tail (none, ？, 哦/嘛/嘞, an emoji; after a
    语气词 only a mark, an emoji or nothing) — else with a question mark, for "own" and "other" alike."""
    out: dict[str, None] = {}
    tries = 0
    while len(out) < n and tries < n * 20:
        text = _fill(forms[tries % len(forms)], slots, rng)
        tries += 1
        if rng.random() < CASUAL_SHARE:
            tails = slots["bare_tail"] if text.endswith(_PARTICLE_END) else slots["tail"]
            text = rng.choice(slots["lead"]) + text + rng.choice(tails)
        else:
            text += "？"
        out.setdefault(text, None)
    return list(out)


def regional_rows(seed: int = SEED) -> list[Example]:
    """Every round-26 row before the screen: "own" then "other", each label's forms of every register
    interleaved so any prefix of the rows holds every register."""
    data: dict[str, Any] = json.loads(REGIONAL_WRITTEN.read_text(encoding="utf-8"))
    rows: list[Example] = []
    for label, n in REGIONAL_COUNTS.items():
        registers = list(data[label].values())
        forms = [r[i] for i in range(max(map(len, registers))) for r in registers if i < len(r)]
        rng = random.Random(f"{seed}-{SOURCE}regional-{label}")
        texts = _asked(forms, n, data["slots"], rng)
        rows += [Example(t, "zh", f"{SOURCE}regional-{label}", None, None, label) for t in texts]
    return rows


def _bigrams(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)}


def _bare(text: str) -> str:
    return re.sub(r"[\s，。！？、,.!?~～…:：;；\"'“”]+", "", text)


def screened(
    rows: list[Example], near: Iterable[str], limit: float = NEAR
) -> tuple[list[Example], list[str]]:
    """(rows kept, texts dropped): a row is dropped when its characters (less spaces and punctuation) are at
    least ``limit`` similar (difflib ratio) to a Chinese text of ``near``. Only texts sharing a character
    bigram with the row are compared (an inverted index: the screen runs against ~100,000 lines)."""
    against = [t for t in {_bare(x) for x in near} if _CJK.search(t)]
    index: dict[str, list[int]] = defaultdict(list)
    for i, text in enumerate(against):
        for gram in _bigrams(text):
            index[gram].append(i)
    kept: list[Example] = []
    dropped: list[str] = []
    for row in rows:
        bare = _bare(row.text)
        grams = _bigrams(bare)
        shared: dict[int, int] = defaultdict(int)
        for gram in grams:
            for i in index.get(gram, ()):
                shared[i] += 1
        matcher = difflib.SequenceMatcher(None, "", bare, autojunk=False)  # the row as seq2: cached once
        close = False
        for i, count in shared.items():
            if 2 * count < 0.3 * (len(grams) + len(_bigrams(against[i]))):  # too few shared bigrams
                continue
            matcher.set_seq1(against[i])
            if matcher.real_quick_ratio() >= limit and matcher.ratio() >= limit:
                close = True
                break
        (dropped.append(row.text) if close else kept.append(row))
    return kept, dropped


def zh_told_examples(
    near: Iterable[str] = (), seed: int = SEED, on: bool | None = None, regional: bool | None = None
) -> list[Example]:
    """Every round-19 gate row (none unless ``on``, default ``ON``) and round 26's regional questions (none
    unless ``regional``, default ``REGIONAL``), less those near a text of ``near``."""
    rows = zh_rows(seed) if (ON if on is None else on) else []
    rows += regional_rows(seed) if (REGIONAL if regional is None else regional) else []
    return screened(rows, near)[0] if rows else []
