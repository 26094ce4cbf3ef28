"""LoCoMo in the voice of the person it is about: how someone asks their own assistant.

LoCoMo's questions are third-person and name someone ("What did Caroline research?"); a person asks their
assistant "What did I research?". This module rewrites a question about one speaker into that speaker's
voice (the name becomes I/me/my, the verb agrees), and rewrites that speaker's observations the same way
("Caroline researched adoption agencies" -> "I researched adoption agencies"), because tierclaw stores
what a person says about themselves in the first person.

``convert_locomo_first_person`` makes one owner per speaker (an assistant has one person's memories):
the speaker's own observations are the memories, and the questions naming that speaker are the queries,
with the speaker's observations drawn from the evidence turns as the relevant ones. A question whose
evidence produced no observation of that speaker cannot be answered from their memories and is dropped
(and counted), as in ``bench.datasets``.

The rewrite is rules, not a parser: it is right for the question shapes LoCoMo uses (wh + auxiliary +
name, name + verb, name's + noun, her/his for the same person) and leaves a rare clumsy verb ("I finds")
where a sentence is more complex; retrieval does not depend on that agreement.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench import dataset_readers
from bench.dataset_format import format_timestamp
from bench.inputs import require_input

# An auxiliary before the name ("does Caroline"), in the form it takes before "I".
_INVERTED = {
    "does": "do",
    "doesn't": "don't",
    "is": "am",
    "isn't": "am not",
    "has": "have",
    "hasn't": "haven't",
    "was": "was",
    "wasn't": "wasn't",
}
_AUXILIARIES = (
    "does|doesn't|is|isn't|has|hasn't|was|wasn't|did|didn't|would|will|can|could|should|might|may|had"
)
# The verb after the name as subject ("Caroline is"), in the form it takes after "I".
_AFTER_I = {
    "is": "am",
    "isn't": "am not",
    "has": "have",
    "hasn't": "haven't",
    "does": "do",
    "doesn't": "don't",
}
_NOT_VERBS = frozenset({"was", "has", "is", "does", "this", "as", "its", "us", "his", "always", "sometimes"})
# Where the name is the subject: the start, after a clause word, or before a verb-like lowercase word.
_CLAUSE_START = re.compile(
    r"(?:^|[.!?;:,]\s*|\b(?:and|but|that|when|while|after|before|if|because|since)\s+)$"
)


def _first_person_verb(word: str) -> str:
    """ "likes" -> "like", "goes" -> "go", "studies" -> "study"; other words unchanged."""
    low = word.lower()
    if low in _AFTER_I:
        return _AFTER_I[low]
    if low in _NOT_VERBS or not low.endswith("s") or low.endswith("ss") or len(low) < 4:
        return word
    if low.endswith("ies"):
        return word[:-3] + "y"
    if low.endswith(("shes", "ches", "xes", "oes", "sses", "zes")):
        return word[:-2]
    return word[:-1]


def to_first_person(text: str, name: str, others: tuple[str, ...] = ()) -> str:
    """``text`` about ``name`` rewritten in ``name``'s own voice (I/me/my), for questions and facts.

    ``others`` are the other people of the conversation: when one of them is named too, she/he/her/his
    may mean them, so those are left alone.
    """
    n = re.escape(name)
    others_named = any(re.search(rf"\b{re.escape(o)}\b", text) for o in others if o != name)
    out = re.sub(rf"\b{n}['’]s\b", "my", text)
    out = re.sub(
        rf"\b({_AUXILIARIES})\s+{n}\b",
        lambda m: f"{_INVERTED.get(m[1].lower(), m[1])} I",
        out,
        flags=re.I,
    )

    def subject_or_object(m: re.Match[str]) -> str:
        if not _CLAUSE_START.search(out[: m.start()]):
            return "me" + (f" {m[1]}" if m[1] else "")
        return "I" + (f" {_first_person_verb(m[1])}" if m[1] else "")

    out = re.sub(rf"\b{n}\b(?:\s+([a-z][a-z']*))?", subject_or_object, out)
    if not others_named:  # she/he/her/his can only mean the person speaking
        out = re.sub(r"\b(?:she|he) (is|has|was|does)\b", lambda m: f"I {_first_person_verb(m[1])}", out)
        out = re.sub(r"\b(?:she|he)\b", "I", out)
        out = re.sub(r"\b(?:herself|himself)\b", "myself", out)
        out = re.sub(
            r"\bher\b(?=\s*(?:[.,!?;:]|$)|\s+(?:to|and|with|for|in|at|on|about|that|a|an|the|relax|feel)\b)",
            "me",
            out,
        )
        out = re.sub(r"\bhim\b", "me", out)
        out = re.sub(r"\b(?:her|his)\b", "my", out)
    out = re.sub(r"\bI and (my [a-z]+|the [a-z]+)\b", r"\1 and I", out)
    return out[:1].upper() + out[1:] if text[:1].isupper() else out


def _named_speaker(question: str, speakers: tuple[str, ...]) -> str | None:
    """The speaker the question names first, or None when it names neither."""
    found = [(m.start(), s) for s in speakers if (m := re.search(rf"\b{re.escape(s)}\b", question))]
    return min(found)[1] if found else None


def convert_locomo_first_person(path: str | Path) -> dict[str, Any]:
    """locomo10.json -> one owner per speaker, first-person memories and questions (module docstring)."""
    samples = json.loads(require_input(path).read_text(encoding="utf-8"))
    owners: list[dict[str, Any]] = []
    dropped = 0
    for sample in samples:
        conversation = sample["conversation"]
        speakers = (str(conversation["speaker_a"]), str(conversation["speaker_b"]))
        dates = dataset_readers.locomo_session_dates(conversation)
        asked_at = format_timestamp(
            dates[dataset_readers.locomo_last_session(conversation)] + timedelta(days=1)
        )
        memories: dict[str, list[dict[str, Any]]] = {s: [] for s in speakers}
        sources: dict[str, dict[str, set[str]]] = {s: {} for s in speakers}
        per_turn: Counter[str] = Counter()
        observations = sample.get("observation", {})
        for session, key in sorted(
            dataset_readers.numbered_keys(observations, dataset_readers.OBSERVATION_KEY).items()
        ):
            created_at = format_timestamp(dates[session])
            for speaker, facts in observations[key].items():
                if speaker not in memories:
                    continue
                for text, raw_ids in facts:
                    turn_ids, _ = dataset_readers.split_dia_ids(raw_ids)
                    if not turn_ids or not str(text).strip():
                        continue
                    memory_id = f"{turn_ids[0]}#{per_turn[turn_ids[0]]}"
                    per_turn[turn_ids[0]] += 1
                    content = to_first_person(str(text).strip(), speaker, speakers)
                    memories[speaker].append({"id": memory_id, "content": content, "created_at": created_at})
                    sources[speaker][memory_id] = set(turn_ids)
        queries: dict[str, list[dict[str, Any]]] = {s: [] for s in speakers}
        for index, item in enumerate(sample.get("qa", [])):
            kind = dataset_readers.LOCOMO_KINDS.get(item.get("category"))
            question = str(item.get("question", "")).strip()
            speaker = _named_speaker(question, speakers)
            evidence, _ = dataset_readers.split_dia_ids(item.get("evidence", []))
            if kind is None or speaker is None or not evidence:
                continue
            relevant = [m for m, turns in sources[speaker].items() if turns & set(evidence)]
            if not relevant:
                dropped += 1
                continue
            queries[speaker].append(
                {
                    "id": f"q{index}",
                    "text": to_first_person(question, speaker, speakers),
                    "relevant": relevant,
                    "kind": kind,
                    "at": asked_at,
                }
            )
        for speaker in speakers:
            owner = f"{sample['sample_id']}:{speaker}"
            owners.append({"owner": owner, "memories": memories[speaker], "queries": queries[speaker]})
    return {"name": "locomo10-first-person", "dropped_no_evidence": dropped, "owners": owners}


def first_person_questions(path: str | Path) -> list[str]:
    """Every category 1-4 question that names a speaker, in that speaker's voice (the gate's family)."""
    samples = json.loads(require_input(path).read_text(encoding="utf-8"))
    out: list[str] = []
    for sample in samples:
        conversation = sample["conversation"]
        speakers = (str(conversation["speaker_a"]), str(conversation["speaker_b"]))
        for item in sample.get("qa", []):
            question = str(item.get("question", "")).strip()
            speaker = _named_speaker(question, speakers)
            if item.get("category") in dataset_readers.LOCOMO_KINDS and speaker is not None:
                out.append(to_first_person(question, speaker, speakers))
    return out
