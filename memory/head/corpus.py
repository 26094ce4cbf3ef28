"""The head's training texts (issue 35, item 2), read from ``../shared/data`` and ``written.json``.

Every source, its licence and what it is used for are in ``DATA_CARD.md``. LCCC and DailyDialog are split
by dialogue: the first half of each file's dialogues (in file order) is **held out** — never trained on —
and is where ``bench.everyday --chitchat-corpora`` counts false keeps; it includes every line
``bench.conversation_recall`` sends as chit-chat (the first 50 DailyDialog and 500 LCCC lines).
Deterministic: the same files give the same texts in the same order.
"""

from __future__ import annotations

import csv
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.head import people
from memory.head.registers import dropped_subject, in_chatter
from memory.model.quick_extract import candidates

SEED = 35
# Clauses of each chit-chat corpus's training lines, as the keeper cuts them: "not kept" for keep.
CLAUSES_PER_CORPUS = 2000
COMPOUNDS_PER_LANGUAGE = 150
# Lines of each chit-chat corpus's training half (all of them: LCCC has ~2,300 distinct, DailyDialog ~3,600).
CHITCHAT_PER_CORPUS = 4000
# Subjectless rewrites of each Chinese persona line (round 3, ``subjectless_persona``).
SUBJECTLESS_ZH_TIMES = 2
WRITTEN = Path(__file__).with_name("written.json")
# Composed statements per template of ``people.KINDS`` (round 5).
PEOPLE_PER_TEMPLATE = 8
# English composed statements too (round 5).
PEOPLE_EN = True
# Round 7: each casual chat statement also told inside this many chatter lines (``chat_examples``).
CHAT_IN_CHATTER = 0


def read_written(path: Path) -> dict[str, Any]:
    """One file of sentences written for training (a JSON object beside the module that uses it)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def written() -> dict[str, Any]:
    """The sentences written for training (``written.json``)."""
    return read_written(WRITTEN)


@dataclass(frozen=True, slots=True)
class Example:
    text: str
    lang: str
    source: str
    keep: int | None = None  # 1 worth keeping, 0 not, None unknown
    category: str | None = None
    asks: str | None = None  # "own" question about one's life, "tell" about one's life, "other"


def _dialogues_lccc(root: Path) -> list[list[str]]:
    data = json.loads((root / "chat" / "lccc_toy_data.json").read_text(encoding="utf-8"))
    return [["".join(str(u).split()) for u in d] for split in data.values() for d in split]


def normalise_dailydialog(text: str) -> str:
    """Undo DailyDialog's tokenisation ("Hello , how are you ?", "I ’ m") so it reads like typed chat
    (``bench.gate_set`` reads the corpus with this too)."""
    text = " ".join(text.split())
    text = re.sub(r"(?<=\w) ?([’‘']) ?(?=(?:s|t|m|d|ll|re|ve)\b)", r"\1", text, flags=re.IGNORECASE)
    text = re.sub(r"(?<=[sS]) ([’']) ", r"\1 ", text)
    text = re.sub(r" +([,.!?;:%)\]}]|\.\.\.)", r"\1", text)
    text = re.sub(r"([(\[{$]) +", r"\1", text)
    text = re.sub(r'" ?([^"]*?) ?"', r'"\1"', text)
    return text.strip()


def _dialogues_dailydialog(root: Path) -> list[list[str]]:
    lines = (root / "chat" / "dailydialog_dialogues_test.txt").read_text(encoding="utf-8").splitlines()
    return [[normalise_dailydialog(t) for t in line.split("__eou__") if t.strip()] for line in lines]


# Each chit-chat corpus and the language of its lines (training's negatives, the bench's false keeps).
CHAT_CORPORA: tuple[tuple[str, str], ...] = (("lccc", "zh"), ("dailydialog", "en"))


def chitchat_split(root: Path, corpus: str, held_out: bool) -> list[str]:
    """Lines of LCCC ("lccc") or DailyDialog ("dailydialog"): the held-out first half of the dialogues, or
    the second half, which training may use."""
    dialogues = _dialogues_lccc(root) if corpus == "lccc" else _dialogues_dailydialog(root)
    half = len(dialogues) // 2
    part = dialogues[:half] if held_out else dialogues[half:]
    return [t for d in part for t in d if t]


def distinct_lines(root: Path, corpus: str, held_out: bool) -> list[str]:
    """``chitchat_split``'s lines without repeats, in order: every reader of a corpus counts lines this way,
    so "the first 500 held-out lines" are the same lines for the bench, ``gap`` and ``held_cut``."""
    return list(dict.fromkeys(chitchat_split(root, corpus, held_out)))


def persona_statements(root: Path) -> tuple[list[str], list[str]]:
    """(English, Chinese) persona sentences, deduplicated, in file order."""
    en: dict[str, None] = {}
    for name in ("Synthetic-Persona-Chat_valid.csv", "Synthetic-Persona-Chat_test.csv"):
        with open(root / "persona" / name, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                for column in ("user 1 personas", "user 2 personas"):
                    for line in (row.get(column) or "").splitlines():
                        if line.strip():
                            en[line.strip()] = None
    for name in ("valid", "test"):
        for item in json.loads((root / "persona" / f"xpersona_En_persona_{name}.json").read_text("utf-8")):
            for line in item["persona"]:
                if line.strip():
                    en[line.strip()] = None
    zh: dict[str, None] = {}
    for name in ("valid", "test"):
        for item in json.loads(
            (root / "persona" / f"xpersona_Zh_persona_split_{name}_human_annotated.json").read_text("utf-8")
        ):
            for line in item["persona"]:
                if line.strip():
                    zh[line.strip()] = None
    return list(en), list(zh)


_YOU_QUESTION_EN = re.compile(r"\byou\b.*\?$", re.I)


def listener_questions(root: Path) -> tuple[list[str], list[str]]:
    """Questions the persona dialogues ask the other person ("what do you do for a living?",
    "你喜欢…吗？")."""
    en: dict[str, None] = {}
    with open(root / "persona" / "Synthetic-Persona-Chat_valid.csv", encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            for line in (row.get("Best Generated Conversation") or "").splitlines():
                text = line.split(":", 1)[-1].strip()
                if _YOU_QUESTION_EN.search(text) and len(text) < 90:
                    en[text] = None
    zh: dict[str, None] = {}
    for item in json.loads(
        (root / "persona" / "xpersona_Zh_persona_split_valid_human_annotated.json").read_text("utf-8")
    ):
        for turn in item["dialogue"]:
            for text in turn:
                text = text.strip()
                if "你" in text and text.endswith(("？", "?")) and len(text) < 40:
                    zh[text] = None
    return list(en), list(zh)


# Registers people type in (the persona sentences are clean and complete).
_EN_LEADS = ["btw ", "oh and ", "fyi ", "also ", "just so you know, ", "by the way ", "", "", "", ""]
_EN_TAILS = [" lol", " haha", " tbh", "!", ".", "", "", "", "", ""]
_ZH_LEADS = ["对了，", "顺便说一下，", "跟你说，", "其实", "", "", "", ""]
_ZH_TAILS = ["啦", "呢", "哈", "哦", "。", "", "", ""]


def casual(text: str, lang: str, rng: random.Random) -> str:
    """The sentence as typed in passing: a lead, a tail, lower case, no full stop."""
    body = text.strip().rstrip(".。!！")
    if lang == "en":
        body = body[0].lower() + body[1:] if body[:1].isupper() and body[1:2].islower() else body
        return (rng.choice(_EN_LEADS) + body + rng.choice(_EN_TAILS)).strip()
    return rng.choice(_ZH_LEADS) + body + rng.choice(_ZH_TAILS)


def _templated_questions(template: dict[str, list[str]], rng: random.Random, n: int) -> list[str]:
    """Short questions about one's own people and things, in many forms (``written.json``'s templates)."""
    return [rng.choice(template["forms"]).format(n=rng.choice(template["nouns"])) for _ in range(n)]


def build(
    root: Path,
    *,
    persona_en: int = 1200,
    chitchat_per_corpus: int = CHITCHAT_PER_CORPUS,
    chat8: bool = False,
) -> list[Example]:
    """Every training example (deterministic sample sizes; see DATA_CARD.md). Each source draws from its
    own seeded generator, so adding written sentences leaves the public samples as they were. ``chat8``:
    also round 8's sentences (tried, not in the shipped head: DATA_CARD "Round 8")."""
    mine = written()
    out = written_examples(mine)
    en, zh = persona_statements(root)
    rng = random.Random(SEED)
    rng.shuffle(en)
    for lang, texts in (("en", en[:persona_en]), ("zh", zh)):
        for i, text in enumerate(texts):
            shown = casual(text, lang, rng) if i % 2 else text
            out.append(Example(shown, lang, f"persona-{lang}", 1, None, "tell"))
    q_en, q_zh = listener_questions(root)
    out += [Example(t, "en", "persona-questions-en", 0, None, "other") for t in q_en[:300]]
    out += [Example(t, "zh", "persona-questions-zh", 0, None, "other") for t in q_zh[:300]]
    for corpus, lang in CHAT_CORPORA:
        lines = distinct_lines(root, corpus, held_out=False)
        random.Random(f"{SEED}-{corpus}").shuffle(lines)
        out += [Example(t, lang, f"{corpus}-train", 0, None, "other") for t in lines[:chitchat_per_corpus]]
        # What the keeper judges of a chit-chat line: each clause, and the sentence (quick_extract.py).
        pieces = dict.fromkeys(
            t for line in lines[:chitchat_per_corpus] for c in candidates(line) for t in c.texts()
        )
        out += [Example(t, lang, f"{corpus}-train-clauses", 0) for t in list(pieces)[:CLAUSES_PER_CORPUS]]
    out += compounds(mine, random.Random(f"{SEED}-compounds"))
    # Round 3, appended last so the rows before keep their place in the seeded validation split.
    out += subjectless_persona(zh) + subjectless_written(mine)
    # Round 5, after them for the same reason; round 7 after that, round 8 (when asked for) last.
    out += people_examples(mine) + chat_examples(mine)
    return out + chat_examples(mine, "chat8") if chat8 else out


def written_examples(mine: dict[str, Any]) -> list[Example]:
    """The written sentences with their labels, each statement also in a casual rewrite."""
    out: list[Example] = []
    rng = random.Random(SEED)
    for lang in ("en", "zh"):
        for category, texts in mine[f"statements_{lang}"].items():
            for text in texts:
                out.append(Example(text, lang, "written", 1, category, "tell"))
                out.append(Example(casual(text, lang, rng), lang, "written-casual", 1, category, "tell"))
        out += [Example(t, lang, "written", 0, "temp", "other") for t in mine[f"temp_{lang}"]]
        out += [Example(t, lang, "written", 0, None, "other") for t in mine[f"not_kept_{lang}"]]
        out += [Example(t, lang, "written", 0, None, "own") for t in mine[f"own_questions_{lang}"]]
        templated = _templated_questions(mine[f"templates_{lang}"], random.Random(f"{SEED}-{lang}"), 150)
        out += [Example(t, lang, "written-template", 0, None, "own") for t in templated]
        out += [Example(t, lang, "written", 0, None, "other") for t in mine[f"other_questions_{lang}"]]
        # Round 2: casual sentences as written (no mechanical rewrite).
        for category, texts in mine.get(f"statements_casual_{lang}", {}).items():
            out += [Example(t, lang, "written-2", 1, category, "tell") for t in texts]
        out += [
            Example(t, lang, "written-2", 0, "temp", "other") for t in mine.get(f"temp_casual_{lang}", ())
        ]
        chatter = mine.get(f"not_kept_casual_{lang}", ())
        out += [Example(t, lang, "written-2", 0, None, "other") for t in chatter]
    return out


def subjectless_persona(zh: list[str]) -> list[Example]:
    """Round 3: each Chinese persona line without its subject, as typed in a chat (``registers.py``),
    ``SUBJECTLESS_ZH_TIMES`` rewrites (its 527 lines are most of the Chinese statements the head sees; the
    English corpora are eight times larger and already hold subjectless lines)."""
    out: list[Example] = []
    rng = random.Random(f"{SEED}-subjectless")
    seen: set[str] = set()
    for _ in range(SUBJECTLESS_ZH_TIMES):
        for text in zh:
            shown = dropped_subject(text, "zh", rng)
            if shown is not None and shown not in seen:
                seen.add(shown)
                out.append(Example(shown, "zh", "persona-zh-subjectless", 1, None, "tell"))
    return out


def subjectless_written(mine: dict[str, Any]) -> list[Example]:
    """Round 3: each written Chinese statement that begins with "我", without it (its category kept)."""
    out: list[Example] = []
    rng = random.Random(f"{SEED}-written-subjectless")
    for key in ("statements_zh", "statements_casual_zh"):
        for category, texts in mine.get(key, {}).items():
            for text in texts:
                shown = dropped_subject(text, "zh", rng)
                if shown is not None:
                    out.append(Example(shown, "zh", "written-subjectless-zh", 1, category, "tell"))
    return out


def compounds(mine: dict[str, Any], rng: random.Random) -> list[Example]:
    """Two statements said in one breath ("I live in Lyon, and my son is 4", "我住在成都，养了一只猫"):
    the whole sentence, which the keeper judges beside its clauses, is worth keeping too."""
    out: list[Example] = []
    for lang, joins in (("en", [", and ", " and ", ", "]), ("zh", ["，", "，而且", "，还有"])):
        texts = [t for texts in mine[f"statements_{lang}"].values() for t in texts]
        for _ in range(COMPOUNDS_PER_LANGUAGE):
            first, second = rng.sample(texts, 2)
            if lang == "en" and second.lower().startswith(("i ", "i'm ")) and rng.random() < 0.5:
                second = second.split(" ", 1)[1]  # "and work as a nurse"
            if lang == "zh" and second.startswith("我") and rng.random() < 0.5:
                second = second[1:]  # "，喜欢用Go"
            out.append(Example(first + rng.choice(joins) + second, lang, "written-compound", 1, None, None))
    return out


def people_examples(mine: dict[str, Any]) -> list[Example]:
    """Round 5: Chinese statements about one's people and things (``people.py``, composed; and
    ``written.json``'s ``statements_people_zh``, written), and small talk in the same register that says
    nothing of the speaker (``people.SMALL_TALK``; ``not_kept_people_zh``)."""
    out = [
        Example(t, "zh", "people-zh", 1, category, "tell")
        for t, category in people.statements(PEOPLE_PER_TEMPLATE)
    ]
    if PEOPLE_EN:
        en = people.statements(PEOPLE_PER_TEMPLATE, "en")
        out += [Example(t, "en", "people-en", 1, category, "tell") for t, category in en]
        out += [
            Example(t, "en", "people-en-small-talk", 0, None, "other") for t in people.small_talk(lang="en")
        ]
    for category, texts in mine.get("statements_people_zh", {}).items():
        out += [Example(t, "zh", "written-people-zh", 1, category, "tell") for t in texts]
    out += [Example(t, "zh", "people-zh-small-talk", 0, None, "other") for t in people.small_talk()]
    out += [
        Example(t, "zh", "written-people-zh", 0, None, "other") for t in mine.get("not_kept_people_zh", ())
    ]
    return out


def chat_examples(mine: dict[str, Any], part: str = "chat") -> list[Example]:
    """Round 7: statements and chatter typed the way people type in a chat app (``written.json``'s
    ``*_chat_*``); each statement also inside chatter of the same register (``registers.in_chatter``),
    and two chatter lines sent as one message, which still says nothing of the speaker. Round 8
    (``part="chat8"``): who one is, typed casually, and chatter with 哈哈/啦/嘛, lol/omg, reactions and
    questions to the listener (source ``written-chat8-<lang>``)."""
    rng = random.Random(f"{SEED}-{part}")
    out: list[Example] = []
    source = f"written-{part}"
    for lang in ("zh", "en"):
        chatter = list(mine.get(f"not_kept_{part}_{lang}", ()))
        for category, texts in mine.get(f"statements_{part}_{lang}", {}).items():
            for text in texts:
                out.append(Example(text, lang, f"{source}-{lang}", 1, category, "tell"))
                out += [
                    Example(
                        in_chatter(text, rng.choice(chatter), lang, rng),
                        lang,
                        f"{source}-{lang}",
                        1,
                        category,
                        "tell",
                    )
                    for _ in range(CHAT_IN_CHATTER)
                ]
        out += [Example(t, lang, f"{source}-{lang}", 0, None, "other") for t in chatter]
    return out


def evaluation_texts(root: Path, repo: Path) -> set[str]:
    """Every tell, ask and chit-chat text of the evaluation sets (never trained on)."""
    texts: set[str] = set()
    for path in sorted((repo / "bench" / "data").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for pair in data.get("pairs", []):
            texts.update((pair["tell"], pair["ask"]))
        texts.update(line["text"] for line in data.get("chitchat", []) + data.get("rows", []))
    locomo = json.loads((root / "locomo" / "locomo10.json").read_text(encoding="utf-8"))
    for sample in locomo:
        texts.update(str(q.get("question", "")) for q in sample.get("qa", []))
    for path in (root / "madial").glob("*.json"):
        texts.update(madial_texts(path))
    return {t.strip() for t in texts if t}


# A MADial-Bench turn: '<Name>:"utterance"\n' (bench/dataset_readers.py reads the benchmark the same way).
_MADIAL_TURN = re.compile(r"^\s*<\w+>\s*:\s*")
_MADIAL_QUOTES = "\"'“”‘’「」"


def madial_texts(path: Path) -> list[str]:
    """What a person or the assistant says in a MADial-Bench file, and its memories' events, as typed.

    The files hold one JSON object a line; banning the raw lines (as this did before stop 66) banned no
    utterance, since a training text never equals a whole JSON line."""
    texts: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        for turn in record.get("dialogue", []):
            spoken = _MADIAL_TURN.sub("", str(turn), count=1).strip().strip(_MADIAL_QUOTES).strip()
            if spoken and not spoken.startswith("<"):
                texts.append(spoken)
        texts.extend(
            str(memory["event"])
            for memory in record.values()
            if isinstance(memory, dict) and memory.get("event")
        )
    return texts
