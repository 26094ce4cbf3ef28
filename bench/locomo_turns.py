"""LoCoMo's dialogue turns as a retrieval corpus: what ``conversation_search`` faces.

    python -m bench.datasets locomo ../shared/data/locomo/locomo10.json --turns -o FILE

One owner per conversation; every turn is a "memory" (``"<speaker>: <text>"``, an image's caption
appended as the dataset gives it, dated by its session), its id the turn's ``dia_id``; each QA item of
categories 1-4 is a query whose relevant items are exactly its evidence turns. Nothing is dropped for lack
of an observation, unlike the observation corpus: every evidence turn exists.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.dataset_format import format_timestamp
from bench.dataset_readers import (
    LOCOMO_KINDS,
    SESSION_KEY,
    locomo_last_session,
    locomo_session_dates,
    numbered_keys,
    split_dia_ids,
)
from bench.inputs import note, require_input


def turn_text(turn: dict[str, Any]) -> str:
    """``"Speaker: text"``, with the shared image's caption when the turn has one."""
    text = f"{turn.get('speaker', '?')}: {str(turn.get('text', '')).strip()}"
    caption = str(turn.get("blip_caption") or "").strip()
    return f"{text} [shares an image: {caption}]" if caption else text


def convert_locomo_turns(path: str | Path) -> dict[str, Any]:
    """Convert locomo10.json: dialogue turns as memories, QA evidence turns as the relevant ids."""
    samples = json.loads(require_input(path).read_text(encoding="utf-8"))
    owners: list[dict[str, Any]] = []
    unknown_evidence = 0
    for sample in samples:
        conversation = sample["conversation"]
        dates = locomo_session_dates(conversation)
        memories: list[dict[str, Any]] = []
        for session, key in sorted(numbered_keys(conversation, SESSION_KEY).items()):
            created_at = format_timestamp(dates[session])
            for turn in conversation[key]:
                if turn.get("dia_id") and str(turn.get("text", "")).strip():
                    memories.append(
                        {"id": str(turn["dia_id"]), "content": turn_text(turn), "created_at": created_at}
                    )
        known = {m["id"] for m in memories}
        at = format_timestamp(dates[locomo_last_session(conversation)] + timedelta(days=1))
        queries = []
        for index, item in enumerate(sample.get("qa", [])):
            kind = LOCOMO_KINDS.get(item.get("category"))
            evidence, _bad = split_dia_ids(item.get("evidence", []))
            relevant = [e for e in dict.fromkeys(evidence) if e in known]
            unknown_evidence += len(set(evidence) - known)
            if kind is None or not relevant:
                continue
            queries.append(
                {
                    "id": f"q{index}",
                    "text": str(item["question"]).strip(),
                    "relevant": relevant,
                    "kind": kind,
                    "at": at,
                }
            )
        owners.append({"owner": str(sample["sample_id"]), "memories": memories, "queries": queries})
    if unknown_evidence:
        note(f"{unknown_evidence} evidence ids name no turn of their conversation and were ignored")
    return {"name": "locomo10-turns", "dropped_no_evidence": 0, "owners": owners}
