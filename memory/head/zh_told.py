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

Round 27 (DATA_CARD "Round 27, Chinese gate rows typed fast"): ``zh_fast_written.json``'s forms typed the way
people type on a phone in a hurry — spaces for commas, no question mark, digits for money, dates and times
(2000, 1块5, 12月6号, 60v), homophone typos, 哈哈/嗯嗯/造/酱紫/木有/肿么, pinyin initials (yyds, xswl, zs,
dbq), English words (deadline, KPI, offer), bursts of short facts — on all four sides: own questions
(``gate-zh-fast-own``, "own"), questions about the world (``gate-zh-fast-other-ask``, "other"), lasting facts
about one's life (``gate-zh-fast-tell``, "tell") and the same typing with no lasting personal fact
(``gate-zh-fast-other-say``, "other"). Half of every label's rows pass through one typing step (``_typed``),
the same for all labels, so nothing but the subject separates them. Gate only and untrusted as round 19's
rows, screened the same way; off unless ``FAST`` (``train --zh-fast``), independent of ``ON`` and
``REGIONAL``.

Round 33 (DATA_CARD "Round 33, Chinese statements in more registers"): ``zh_said_written.json``'s statements
in registers the earlier rows never said a statement in — 马来西亚/新加坡华语, 粤语, 上海话, 台湾国语,
四川/东北/湖南/闽南, an older person voice-typing, photo captions, facts inside requests and reminders —
on two sides: lasting facts about one's life (``gate-zh-said-tell``, "tell") and the same registers with no
lasting fact (``gate-zh-said-other-say``, "other"). Written with spaces between phrases as typed, not through
the typing step; every other row with commas there (``_punctuated``). Gate rows and untrusted as the others,
screened the same way; off unless ``SAID`` (``train --zh-said``).
"""

from __future__ import annotations

import difflib
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory.head.corpus import SEED, Example, read_written

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
# Round 27: rows typed fast, per side of ``zh_fast_written.json`` (its label: ``FAST_LABELS``); in a training
# run when ``FAST`` (``--zh-fast``).
FAST_WRITTEN = Path(__file__).with_name("zh_fast_written.json")
FAST_COUNTS = {"own": 200, "other_ask": 200, "tell": 300, "other_say": 300}
FAST_LABELS = {"own": "own", "other_ask": "other", "tell": "tell", "other_say": "other"}
FAST = False
# Round 33: statements in more registers, per side of ``zh_said_written.json`` (labels as ``FAST_LABELS``);
# in a training run when ``SAID`` (``--zh-said``).
SAID_WRITTEN = Path(__file__).with_name("zh_said_written.json")
SAID_COUNTS = {"tell": 300, "other_say": 300}
SAID = False
# The typing step (``_typed``): the share of each side's rows it is applied to, the rate of a homophone typo
# (one, from ``TYPOS``: the written character → the one typed) and of a tail (``TYPED_TAILS``) in a typed row.
TYPED_SHARE = 0.5
TYPO_RATE = 0.15
TYPED_TAIL_RATE = 0.2
TYPOS = (
    ("在", "再"),
    ("再", "在"),
    ("的", "得"),
    ("得", "的"),
    ("地", "的"),
    ("做", "作"),
    ("已经", "以经"),
    ("哪", "那"),
    ("那", "哪"),
    ("吗", "嘛"),
    ("块", "快"),
    ("账", "帐"),
)
TYPED_TAILS = ("哈哈", " 哈哈哈", "嗯嗯", " 嗯嗯", "😂", " 😭", "🙏", " [捂脸]", "～", "啊")
# A form already ending in one of these (a 语气词 or an A-not-A's end) takes only a mark, an emoji or nothing.
_PARTICLE_END = tuple("嗦齁吼喔哦嘛噻呢啊咧哈呀不没冇未么吗吧欸撒哇嘞咯着")

_SLOT = re.compile(r"\{(\w+)\}")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def zh_told_written() -> dict[str, Any]:
    return read_written(WRITTEN)


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


def _distinct(
    forms: list[str], n: int, slots: dict[str, list[str]], rng: random.Random, dress: Callable[[str], str]
) -> list[str]:
    """``n`` distinct texts (fewer if the forms cannot make them), the forms taken in turn, each filled
    and then dressed as typed (``dress`` draws from the same ``rng`` after the fill)."""
    out: dict[str, None] = {}
    tries = 0
    while len(out) < n and tries < n * 20:
        text = dress(_fill(forms[tries % len(forms)], slots, rng))
        tries += 1
        out.setdefault(text, None)
    return list(out)


def _made(forms: list[str], n: int, slots: dict[str, list[str]], rng: random.Random, label: str) -> list[str]:
    """Round 19's rows of one group: questions ("own") with a casual lead and tail now and then, statements
    shown as said (``_shown``)."""

    def dress(text: str) -> str:
        if label != "own":
            return _shown(text, slots, rng, label == "tell")
        casual = rng.random() < CASUAL_SHARE
        lead = rng.choice(slots["lead"]) if casual else ""
        return lead + text + rng.choice(["？", "", "啊？", "呀", "？？", "嘞"] if casual else ["？"])

    return _distinct(forms, n, slots, rng, dress)


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

    def dress(text: str) -> str:
        if rng.random() < CASUAL_SHARE:
            tails = slots["bare_tail"] if text.endswith(_PARTICLE_END) else slots["tail"]
            return rng.choice(slots["lead"]) + text + rng.choice(tails)
        return text + "？"

    return _distinct(forms, n, slots, rng, dress)


def regional_rows(seed: int = SEED) -> list[Example]:
    """Every round-26 row before the screen: "own" then "other", each label's forms of every register
    interleaved so any prefix of the rows holds every register."""
    data = read_written(REGIONAL_WRITTEN)
    rows: list[Example] = []
    for label, n in REGIONAL_COUNTS.items():
        registers = list(data[label].values())
        forms = [r[i] for i in range(max(map(len, registers))) for r in registers if i < len(r)]
        rng = random.Random(f"{seed}-{SOURCE}regional-{label}")
        texts = _asked(forms, n, data["slots"], rng)
        rows += [Example(t, "zh", f"{SOURCE}regional-{label}", None, None, label) for t in texts]
    return rows


def _typed(text: str, rng: random.Random) -> str:
    """``text`` as typed fast: commas, full stops and the like to spaces, question marks dropped, at
    ``TYPO_RATE`` one homophone typo of ``TYPOS``, at ``TYPED_TAIL_RATE`` a 哈哈/嗯嗯/emoji tail."""
    text = re.sub(r"\s*[，。、,！!；;～~]+\s*", " ", text)
    text = re.sub(r"[？?]+", "", text)
    if rng.random() < TYPO_RATE:
        found = [(a, b) for a, b in TYPOS if a in text]
        if found:
            a, b = rng.choice(found)
            i = rng.choice([m.start() for m in re.finditer(a, text)])
            text = text[:i] + b + text[i + len(a) :]
    if rng.random() < TYPED_TAIL_RATE:
        text = text.rstrip() + rng.choice(TYPED_TAILS)
    return re.sub(r" {2,}", " ", text).strip()


def fast_written() -> dict[str, Any]:
    return read_written(FAST_WRITTEN)


def fast_rows(seed: int = SEED) -> list[Example]:
    """Every round-27 row before the screen, by side (``FAST_COUNTS``: own, other_ask, tell, other_say)."""
    return sided_rows(fast_written(), FAST_COUNTS, "fast", TYPED_SHARE, seed)


def said_rows(seed: int = SEED) -> list[Example]:
    """Every round-33 row before the screen, by side (``SAID_COUNTS``: tell, other_say). Its forms were
    written with spaces between phrases, as typed on a phone; every other row of each side gets commas
    there instead (``_punctuated``), the same on both sides."""
    rows = sided_rows(read_written(SAID_WRITTEN), SAID_COUNTS, "said", 0.0, seed)
    rng = random.Random(f"{seed}-{SOURCE}said-punctuated")
    return [replace(e, text=_punctuated(e.text, rng)) if i % 2 else e for i, e in enumerate(rows)]


def _punctuated(text: str, rng: random.Random) -> str:
    """``text`` with a comma for each space between two Chinese characters, and a full stop at the end of
    one in three (the reverse of ``_typed``'s first step)."""
    text = re.sub(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])", "，", text)
    return text + "。" if _CJK.search(text[-1:]) and rng.random() < 1 / 3 else text


def sided_rows(
    data: dict[str, Any], counts: dict[str, int], name: str, typed_share: float, seed: int
) -> list[Example]:
    """A written file's rows by side (``counts``; labels ``FAST_LABELS``), source ``gate-zh-<name>-<side>``:
    ``n`` distinct texts (fewer if the forms cannot make them), each side's groups interleaved so any prefix
    holds every group, the forms taken in turn; ``typed_share`` of each side's rows through ``_typed``
    (every other row kept at 0.5: the same share on every side, however many of a side's written texts
    repeat), the rest as written."""
    slots: dict[str, list[str]] = data["slots"]
    rows: list[Example] = []
    for side, n in counts.items():
        groups = list(data[side].values())
        forms = [g[i] for i in range(max(map(len, groups))) for g in groups if i < len(g)]
        rng = random.Random(f"{seed}-{SOURCE}{name}-{side}")
        out: dict[str, None] = {}
        tries = 0
        while len(out) < n and tries < n * 20:
            text = _fill(forms[tries % len(forms)], slots, rng)
            tries += 1
            typed = int((len(out) + 1) * typed_share) > int(len(out) * typed_share)  # the share of rows kept
            out.setdefault(_typed(text, rng) if typed else text, None)
        source = f"{SOURCE}{name}-{side.replace('_', '-')}"
        rows += [Example(t, "zh", source, None, None, FAST_LABELS[side]) for t in out]
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
    near: Iterable[str] = (),
    seed: int = SEED,
    on: bool | None = None,
    regional: bool | None = None,
    fast: bool | None = None,
    said: bool | None = None,
) -> list[Example]:
    """Every round-19 gate row (none unless ``on``, default ``ON``), round 26's regional questions (none
    unless ``regional``, default ``REGIONAL``), round 27's rows typed fast (none unless ``fast``, default
    ``FAST``) and round 33's statements (none unless ``said``, default ``SAID``), less those near a text of
    ``near``."""
    rows = zh_rows(seed) if (ON if on is None else on) else []
    rows += regional_rows(seed) if (REGIONAL if regional is None else regional) else []
    rows += fast_rows(seed) if (FAST if fast is None else fast) else []
    rows += said_rows(seed) if (SAID if said is None else said) else []
    return screened(rows, near)[0] if rows else []
