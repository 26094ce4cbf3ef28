"""Re-indexing a home indexed before Traditional Chinese was folded to Simplified, or before an unknown
Chinese word was indexed with its pairs of characters (issue 35).

Since ``memory/text/script.py`` the tokenizer reads Traditional as Simplified, so "我養了一隻貓" indexed by
an older tierclaw (its tokens then: ``一隻 貓``…) is not found by "猫" today. The schema version that adds
``search_refold`` (``memory/store/refold.py``) marks the four searchable tables of such a home; opening
the engine walks what is left of them here, ``BATCH_ROWS`` rows by id per transaction, each batch
committed with its marker, so a stopped start resumes where it was and a walked home reads one empty
table.

The version ``SEARCH_REINDEX`` marks every table again for the pairs (``tokenizer.search_words``: a name
jieba cut whole, "邢桂琴", found by "桂琴"): a row whose search text holds a Han character and no Traditional
gains the pairs of the unknown words it holds (``tokenizer.with_pairs``, no jieba again: its words are what
the tokenizer made of it, and a turn keeps the words of a turn before it that retention has deleted since);
an English row is already what the tokenizer makes of it.

A row whose search text holds a Traditional character is rewritten from what it is made of, as it would be
written today: a
memory's content (``memory/writes.py``), a turn's words and the words of the turn before it in its chat
(``memory/conversation.py``), an event's summary, goal and entities (``memory/event_log.py``), an
attachment's name, caption, description, transcription and text (``memory/attachments.py``). Folding the
stored tokens instead is not enough: jieba cuts Traditional text elsewhere ("臺灣的" → ``臺 灣的``, never
``台湾``).

Why at open and not in the background: it is done once per home and the reply path must not find half a
home; a row costs a read and a string scan, a Traditional one jieba again (what a big home costs is
measured in bench/README, issue 35, the Traditional fold and round 41).

Vectors (of a row that held Traditional; the pairs change no vector): the local model reads Simplified too
(``vectors/embedding._clean_for_engine``), which matters
(blind7, ask hybrid, zh recall 0.750 with the embedder reading Traditional, 0.827 folded), so a rewritten
memory loses its local vector and the vector cache its rows for that text: the embedding backfill makes
them again, in the background (``vectors/reindex.py``). A turn's vector is left as it was (it embeds its
text after the turn before it; the cache keys that text, not rebuilt here).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

from memory.attachments import search_text as attachment_search_text
from memory.store.protocol import MemoryStore
from memory.text.script import to_simplified
from memory.text.tokenizer import has_han, index_text, with_pairs
from memory.vectors.cache import PASSAGE_SUFFIX, text_hash
from memory.vectors.embedding import LOCAL_MODEL_KEY

__all__ = ["BATCH_ROWS", "refold_search_text"]

log = logging.getLogger("tierclaw.memory")

# Rows read per transaction: a write waits little behind one batch, and a home of 100,000 turns is
# walked in a hundred of them.
BATCH_ROWS = 1000


def _turn(content: str, previous: str | None) -> str:
    own, before = index_text(content), index_text(previous) if previous else ""
    return f"{own} {before}" if before else own


def _event(summary: str, goal: str, entities: str) -> str:
    return index_text(" ".join([summary, goal, *json.loads(entities or "[]")]))


_BUILDERS: dict[str, Callable[..., str]] = {
    "memories": index_text,
    "conversation_turns": _turn,
    "daily_events": _event,
    "attachments": attachment_search_text,
}


async def refold_search_text(store: MemoryStore, batch: int = BATCH_ROWS) -> int:
    """Walk every table ``store`` still marks (see the module docstring); returns the rows rewritten."""
    started = time.monotonic()
    rewritten = 0
    for table, after in (await store.refold.pending()).items():
        done = False
        while not done:
            done, after, count = await _batch(store, table, after, batch)
            rewritten += count
    if rewritten:
        log.info(
            "[memory] %d rows of Chinese re-indexed as the tokenizer reads them today in %.1fs",
            rewritten,
            time.monotonic() - started,
        )
    return rewritten


async def _batch(store: MemoryStore, table: str, after: int, batch: int) -> tuple[bool, int, int]:
    """One transaction: the next ``batch`` rows after id ``after`` rewritten where they hold Chinese
    indexed otherwise than today, the marker moved past them (dropped at the end). Returns (walked to
    the end, last id, rows rewritten)."""
    async with store.transaction():
        texts = await store.refold.texts(table, after, batch)
        traditional = {i: old for i, old in texts if to_simplified(old) != old}
        sources = await store.refold.sources(table, list(traditional))
        changed = [(i, traditional[i], _new(table, src)) for i, src in sources.items()]
        # Every other Chinese row only gains its pairs, from the words it holds: a turn keeps the words
        # of a turn before it that retention has since deleted.
        changed += [(i, old, with_pairs(old)) for i, old in texts if i not in traditional and has_han(old)]
        # In id order, as every replica walking the same batch writes it (no two lock rows crosswise).
        changed = sorted((i, old, new) for i, old, new in changed if new != old)
        if changed:
            await store.refold.rewrite(table, changed)
        if table == "memories":
            await _forget_folded_vectors(store, [i for i, _, _ in changed if i in sources], sources)
        if len(texts) < batch:
            await store.refold.finished(table)
            return True, after, len(changed)
        last = texts[-1][0]
        await store.refold.passed(table, last)
        return False, last, len(changed)


async def _forget_folded_vectors(
    store: MemoryStore, ids: list[int], sources: dict[int, tuple[Any, ...]]
) -> None:
    """The local model reads Simplified now: the vectors of the memories of ``ids`` told in Traditional (by
    their content, not their search text, whose pairs may read as Traditional) are made again by the
    backfill (an API model's are kept: its input is not folded)."""
    folded = [i for i in ids if to_simplified(str(sources[i][0])) != str(sources[i][0])]
    if folded:
        hashes = [text_hash(str(sources[i][0])) for i in folded]
        local = (LOCAL_MODEL_KEY, LOCAL_MODEL_KEY + PASSAGE_SUFFIX)
        await store.refold.forget_vectors(folded, hashes, local)


def _new(table: str, source: tuple[Any, ...]) -> str:
    return _BUILDERS[table](*(str(part) if part is not None else None for part in source))
