"""The public data sets' readers: LoCoMo and MADial files turned into the generic benchmark format
(``bench/dataset_format.py``), with the date and dialogue-id parsing they need.

Apart from ``datasets.py`` (the command line that writes the converted files) so that the other
converters (``first_person.py``, ``locomo_turns.py``, ``gate_set.py``) import these readers and the command
line imports the converters without an import cycle.
"""

from __future__ import annotations

import calendar
import json
import re
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.dataset_format import format_timestamp, read_jsonl
from bench.inputs import note, require_input

LOCOMO_KINDS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MADIAL_QUERY_KIND = "implicit"
MADIAL_LANGS = ("zh", "en")

DIA_ID = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$", re.IGNORECASE)
SESSION_KEY = re.compile(r"^session_(\d+)$")
SESSION_DATE_KEY = re.compile(r"^session_(\d+)_date_time$")
OBSERVATION_KEY = re.compile(r"^session_(\d+)_observation$")
SPEAKER_PREFIX = re.compile(r"^\s*<(\w+)>\s*:\s*")
MADIAL_ASSISTANT = "Assistant"
TURN_QUOTES = "\"'“”‘’「」"

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_TIME = r"(?:(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?\s?m\.?)?\s*(?:on\s+|,\s*)?)?"
_DAY_MONTH_YEAR = re.compile(
    _TIME + r"(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?P<month>[A-Za-z]+)\.?,?\s+(?P<year>\d{4})$", re.IGNORECASE
)
_MONTH_DAY_YEAR = re.compile(
    _TIME + r"(?P<month>[A-Za-z]+)\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<year>\d{4})$", re.IGNORECASE
)


# ----------------------------------------------------------------------------------------------- dates


def _hour_24(hour: int, ampm: str | None) -> int:
    """Convert a 12-hour clock reading (``12 am`` is midnight) to 24-hour."""
    if not ampm:
        return hour
    is_pm = ampm.lower().startswith("p")
    return (hour % 12) + (12 if is_pm else 0)


def parse_datetime(text: str) -> datetime:
    """Parse LoCoMo-style dates ("1:56 pm on 8 May, 2023", "May 8, 2023", ISO) into a naive datetime.

    LoCoMo session dates are free text; being lenient here is cheaper than dropping sessions.
    """
    cleaned = " ".join(text.split())
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        match = pattern.match(cleaned)
        if match and match["month"].lower() in _MONTHS:
            hour = _hour_24(int(match["hour"] or 0), match["ampm"])
            return datetime(
                int(match["year"]),
                _MONTHS[match["month"].lower()],
                int(match["day"]),
                hour,
                int(match["minute"] or 0),
            )
    try:
        return datetime.fromisoformat(cleaned).replace(tzinfo=None, microsecond=0)
    except ValueError:
        raise ValueError(f"unrecognised date {text!r}") from None


# ---------------------------------------------------------------------------------------------- LoCoMo


def split_dia_ids(raw: str | Sequence[str]) -> tuple[list[str], int]:
    """Split evidence/source turn ids into normalised "D<session>:<turn>" ids, plus how many were malformed.

    LoCoMo stores them as a list, but items may hold several ids ("D8:6; D9:17", "D9:1 D4:4") or be
    malformed ("D", "D:11:26"); a strict reader would silently lose evidence.
    """
    items = [raw] if isinstance(raw, str) else list(raw)
    ids: list[str] = []
    malformed = 0
    for item in items:
        for token in re.split(r"[;,\s]+(?=D)|[;,]", str(item), flags=re.IGNORECASE):
            token = token.strip()
            if not token:
                continue
            match = DIA_ID.match(token)
            if match is None:
                malformed += 1
                continue
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id not in ids:
                ids.append(dia_id)
    return ids, malformed


def numbered_keys(keys: Iterable[str], pattern: re.Pattern[str]) -> dict[int, str]:
    """Map session numbers to the keys matching ``pattern`` (e.g. session_3_observation -> 3)."""
    found: dict[int, str] = {}
    for key in keys:
        match = pattern.match(key)
        if match:
            found[int(match[1])] = key
    return found


def locomo_session_dates(conversation: dict[str, Any]) -> dict[int, datetime]:
    """Parse every ``session_N_date_time`` of a conversation."""
    keys = numbered_keys(conversation, SESSION_DATE_KEY)
    return {number: parse_datetime(conversation[key]) for number, key in keys.items()}


def locomo_last_session(conversation: dict[str, Any]) -> int:
    """Number of the last session that has turns.

    Some conversations list dates for sessions that hold no turns (conv-26 has dates up to session 35 but
    turns only up to 19); the questions are asked after the last real session, not after those.
    """
    sessions = [n for n, key in numbered_keys(conversation, SESSION_KEY).items() if conversation[key]]
    if sessions:
        return max(sessions)
    dated = numbered_keys(conversation, SESSION_DATE_KEY)
    if not dated:
        raise ValueError("conversation has neither sessions nor session dates")
    return max(dated)


def locomo_memories(
    sample: dict[str, Any], dates: dict[int, datetime]
) -> tuple[list[dict[str, Any]], dict[str, set[str]]]:
    """Turn observations into memories; also return memory id -> source turn ids for evidence matching.

    Ids are "<first source turn>#<k>" because one turn can yield several observations.
    """
    sample_id = sample.get("sample_id", "?")
    memories: list[dict[str, Any]] = []
    sources: dict[str, set[str]] = {}
    per_turn: Counter[str] = Counter()
    malformed = 0
    observations = sample.get("observation", {})
    for session, key in sorted(numbered_keys(observations, OBSERVATION_KEY).items()):
        if session not in dates:
            raise ValueError(f"LoCoMo {sample_id}: {key} has no session_{session}_date_time")
        created_at = format_timestamp(dates[session])
        for facts in observations[key].values():
            for text, raw_ids in facts:
                turn_ids, bad = split_dia_ids(raw_ids)
                malformed += bad
                if not turn_ids or not str(text).strip():
                    malformed += 1
                    continue
                memory_id = f"{turn_ids[0]}#{per_turn[turn_ids[0]]}"
                per_turn[turn_ids[0]] += 1
                memories.append({"id": memory_id, "content": str(text).strip(), "created_at": created_at})
                sources[memory_id] = set(turn_ids)
    if malformed:
        note(f"LoCoMo {sample_id}: {malformed} malformed observation source ids ignored")
    return memories, sources


def locomo_queries(
    sample: dict[str, Any], sources: dict[str, set[str]], at: datetime
) -> tuple[list[dict[str, Any]], int]:
    """Build queries from QA items of categories 1-4; return them and how many had no evidence observation.

    Category 5 (adversarial) has no answer in memory, so it is not a recall query. Questions whose evidence
    turns produced no observation cannot be found by any retriever over observations: they are dropped
    and counted, so the benchmark can still report recall against all questions.
    """
    queries: list[dict[str, Any]] = []
    dropped = 0
    malformed = 0
    for index, item in enumerate(sample.get("qa", [])):
        kind = LOCOMO_KINDS.get(item.get("category"))
        if kind is None:
            continue
        evidence, bad = split_dia_ids(item.get("evidence", []))
        malformed += bad
        wanted = set(evidence)
        if not wanted:
            continue  # no evidence at all: not a recall question (4 in LoCoMo), as in the reference numbers
        relevant = [memory_id for memory_id, turns in sources.items() if turns & wanted]
        if not relevant:
            dropped += 1
            continue
        queries.append(
            {
                "id": f"q{index}",
                "text": str(item["question"]).strip(),
                "relevant": relevant,
                "kind": kind,
                "at": format_timestamp(at),
            }
        )
    if malformed:
        note(f"LoCoMo {sample.get('sample_id', '?')}: {malformed} malformed evidence ids ignored")
    return queries, dropped


def convert_locomo(path: str | Path) -> dict[str, Any]:
    """Convert locomo10.json: one owner per conversation, observations as memories, QA as queries."""
    samples = json.loads(require_input(path).read_text(encoding="utf-8"))
    owners: list[dict[str, Any]] = []
    dropped = 0
    for sample in samples:
        conversation = sample["conversation"]
        dates = locomo_session_dates(conversation)
        last = locomo_last_session(conversation)
        memories, sources = locomo_memories(sample, dates)
        queries, sample_dropped = locomo_queries(sample, sources, dates[last] + timedelta(days=1))
        dropped += sample_dropped
        owners.append({"owner": str(sample["sample_id"]), "memories": memories, "queries": queries})
    return {"name": "locomo10", "dropped_no_evidence": dropped, "owners": owners}


def locomo_questions(path: str | Path) -> list[str]:
    """All category 1-4 questions, evidence or not: for the gate every one of them needs memory."""
    samples = json.loads(require_input(path).read_text(encoding="utf-8"))
    return [
        str(item["question"]).strip()
        for sample in samples
        for item in sample.get("qa", [])
        if item.get("category") in LOCOMO_KINDS
    ]


# ---------------------------------------------------------------------------------------------- MADial


def madial_paths(folder: str | Path, lang: str) -> tuple[Path, Path]:
    """The (memory, dialogue) files of one language, checked to exist."""
    folder = require_input(folder)
    return (
        require_input(folder / f"MADial-Bench-{lang}-memory.json"),
        require_input(folder / f"MADial-Bench-{lang}-dialogue.json"),
    )


def load_madial_memories(path: Path) -> dict[str, dict[str, Any]]:
    """Merge the one-object-per-line memory file into {memory id: record}."""
    merged: dict[str, dict[str, Any]] = {}
    for row in read_jsonl(path):
        for memory_id, record in row.items():
            if str(memory_id) in merged:
                raise ValueError(f"{path}: duplicate memory id {memory_id!r}")
            merged[str(memory_id)] = record
    return merged


def madial_speaker(turn: str) -> str | None:
    """The "<Name>:" speaker of a turn, or None (markers like <BOD>, or a turn that lost its prefix)."""
    match = SPEAKER_PREFIX.match(turn)
    return match[1] if match else None


def is_user_turn(turn: str) -> bool:
    """A user turn carries a named, non-assistant speaker prefix.

    The English file has a few assistant turns with the prefix missing or mangled ("<Basketball is ...");
    treating anything unprefixed as not-the-user keeps those out of the query text.
    """
    speaker = madial_speaker(turn)
    return speaker is not None and speaker != MADIAL_ASSISTANT


def clean_turn(turn: str) -> str:
    """Strip the speaker prefix and the quotes around the utterance, leaving what the person typed."""
    text = SPEAKER_PREFIX.sub("", turn, count=1).strip()
    return text.strip(TURN_QUOTES).strip()


def madial_query_text(dialogue: Sequence[str], test_turns: Sequence[int]) -> str:
    """The user's turns before the first test turn, one per line.

    ``test-turn`` indexes ``dialogue`` (index 0 is "<BOD>") at the assistant turns where a memory should
    be recalled; later indices are alternative recall points or variants, so the first one is where the
    assistant must first decide to recall, from what the user has said so far.
    """
    first = min(test_turns)
    said = [clean_turn(turn) for turn in dialogue[:first] if is_user_turn(turn)]
    return "\n".join(text for text in said if text)


def _sibling_memories(folder: Path, lang: str) -> dict[str, dict[str, Any]]:
    """Memories of the parallel language, used only to recover user ids missing in this language's file."""
    for other in MADIAL_LANGS:
        path = folder / f"MADial-Bench-{other}-memory.json"
        if other != lang and path.exists():
            return load_madial_memories(path)
    return {}


def _user_names(dialogues: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Speaker name -> user id, learned from the dialogues' user turns."""
    names: dict[str, str] = {}
    for dialogue in dialogues:
        for turn in dialogue["dialogue"]:
            speaker = madial_speaker(turn)
            if speaker and speaker != MADIAL_ASSISTANT:
                names.setdefault(speaker, str(dialogue["user-id"]))
    return names


def madial_memory_owners(
    memories: dict[str, dict[str, Any]],
    sibling: dict[str, dict[str, Any]],
    dialogues: Sequence[dict[str, Any]],
) -> dict[str, str]:
    """Memory id -> user id.

    The English memory file has no ``user-id``; fall back to the parallel (same ids) Chinese record, then to
    the one user whose name the event mentions. Memories still unresolved are left out by the caller.
    """
    names = _user_names(dialogues)
    owners: dict[str, str] = {}
    for memory_id, record in memories.items():
        user = record.get("user-id", sibling.get(memory_id, {}).get("user-id"))
        if user is None:
            mentioned = {uid for name, uid in names.items() if name in str(record.get("event", ""))}
            user = mentioned.pop() if len(mentioned) == 1 else None
        if user is not None:
            owners[memory_id] = str(user)
    return owners


def _madial_memory(memory_id: str, record: dict[str, Any]) -> dict[str, Any]:
    """One MADial memory event in the generic format (content = event text, dated at midnight)."""
    return {
        "id": memory_id,
        "content": str(record["event"]).strip(),
        "created_at": format_timestamp(parse_datetime(str(record["time"]))),
    }


def convert_madial(folder: str | Path, lang: str) -> dict[str, Any]:
    """Convert MADial-Bench of one language: owners are the users, one implicit-recall query per dialogue."""
    if lang not in MADIAL_LANGS:
        raise ValueError(f"unknown MADial language {lang!r}; expected one of {MADIAL_LANGS}")
    memory_path, dialogue_path = madial_paths(folder, lang)
    memories = load_madial_memories(memory_path)
    dialogues = read_jsonl(dialogue_path)
    owner_of = madial_memory_owners(memories, _sibling_memories(Path(folder), lang), dialogues)
    if len(owner_of) < len(memories):
        note(f"MADial {lang}: {len(memories) - len(owner_of)} memories with no known user left out")
    blocks: dict[str, dict[str, Any]] = {}
    for memory_id, user in sorted(owner_of.items(), key=lambda item: (item[1], _id_key(item[0]))):
        block = blocks.setdefault(user, {"owner": f"madial-user-{user}", "memories": [], "queries": []})
        block["memories"].append(_madial_memory(memory_id, memories[memory_id]))
    dropped = 0
    for line, dialogue in enumerate(dialogues):
        user = str(dialogue["user-id"])
        relevant = [str(r) for r in dialogue.get("relevant-id", []) if owner_of.get(str(r)) == user]
        text = madial_query_text(dialogue["dialogue"], dialogue["test-turn"])
        if not relevant or not text or user not in blocks:
            dropped += 1
            continue
        query_id = f"d{dialogue.get('id', line)}"
        blocks[user]["queries"].append(
            {"id": query_id, "text": text, "relevant": relevant, "kind": MADIAL_QUERY_KIND}
        )
    owners = [blocks[user] for user in sorted(blocks, key=_id_key)]
    return {"name": f"madial-{lang}", "dropped_no_evidence": dropped, "owners": owners}


def _id_key(value: str) -> tuple[int, str]:
    """Sort numeric ids numerically ("2" before "10"), others after them."""
    return (int(value), "") if value.isdigit() else (sys.maxsize, value)
