"""The gate set (``python -m bench.datasets gate``): messages that need memory — LoCoMo questions as asked
and in the first person, MADial zh — against chit-chat that does not (LCCC, DailyDialog), JSON lines
``{"text", "needs_memory", "lang", "source"}`` for ``bench.gate``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from bench.dataset_readers import convert_madial, locomo_questions, madial_paths
from bench.first_person import first_person_questions
from bench.inputs import require_input
from memory.head.corpus import normalise_dailydialog


def lccc_negatives(path: str | Path) -> list[str]:
    """Every utterance of the LCCC toy set (all splits) with the tokenising spaces removed."""
    data = json.loads(require_input(path).read_text(encoding="utf-8"))
    splits = data.values() if isinstance(data, dict) else [data]
    texts = [
        "".join(str(utterance).split()) for split in splits for dialogue in split for utterance in dialogue
    ]
    return [text for text in texts if text]


def dailydialog_negatives(path: str | Path) -> list[str]:
    """Every non-empty turn of the DailyDialog file (turns end with ``__eou__``), normalised."""
    texts: list[str] = []
    for line in require_input(path).read_text(encoding="utf-8").splitlines():
        texts.extend(normalise_dailydialog(turn) for turn in line.split("__eou__"))
    return [text for text in texts if text]


def _gate_row(text: str, needs_memory: bool, lang: str, source: str) -> dict[str, Any]:
    """One gate line; a function so every source produces identical keys in the same order."""
    return {"text": text, "needs_memory": needs_memory, "lang": lang, "source": source}


def dedupe_rows(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep the first line of each (text, lang); chit-chat repeats ("ok", "哈哈") would dominate otherwise."""
    seen: set[tuple[str, str]] = set()
    kept: list[dict[str, Any]] = []
    for row in rows:
        key = (row["text"], row["lang"])
        if key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


def build_gate(root: str | Path) -> list[dict[str, Any]]:
    """Gate set: questions that need memory (LoCoMo as asked and in the first person, MADial zh) vs.
    chit-chat (LCCC, DailyDialog)."""
    root = require_input(root)
    locomo = require_input(root / "locomo" / "locomo10.json")
    madial_folder = root / "madial"
    madial_paths(madial_folder, "zh")
    lccc = require_input(root / "chat" / "lccc_toy_data.json")
    dailydialog = require_input(root / "chat" / "dailydialog_dialogues_test.txt")
    positives = [_gate_row(text, True, "en", "locomo") for text in locomo_questions(locomo)]
    positives += dedupe_rows(
        _gate_row(text, True, "en", "locomo-first-person") for text in first_person_questions(locomo)
    )
    madial = convert_madial(madial_folder, "zh")
    positives += [
        _gate_row(query["text"], True, "zh", "madial-zh")
        for owner in madial["owners"]
        for query in owner["queries"]
    ]
    negatives = [_gate_row(text, False, "zh", "lccc") for text in lccc_negatives(lccc)]
    negatives += [_gate_row(text, False, "en", "dailydialog") for text in dailydialog_negatives(dailydialog)]
    return positives + dedupe_rows(negatives)
