"""The raw conversation as a searchable tier: every turn kept per owner, found again by what was said.

Facts extraction keeps is what the memory model judged worth it; this keeps the rest, so that
``conversation_search`` (a tool of the main model), ``tierclaw memory search --turns`` and the memory page
can find a sentence nobody extracted. Turns are indexed the Chinese-correct way memories are (jieba
segmentation + stemming, ``memory/text/tokenizer.py``). A hit comes with its neighbours in the same chat,
because a turn read alone ("yes, the blue one") often says nothing.

With embeddings on, each turn also gets a vector (filled in the background by the embedding backfill,
``memory/vectors/reindex.py``, never on the reply path) of its text after the turn before it, as its word
index holds that turn's words too (``TurnRows.missing_vectors``), and a search adds the turns closest in
meaning to the word matches before re-ranking them together (``rerank``; bench/README.md, "Conversation
search").
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from memory.clock import to_db, utcnow
from memory.retrieval.ranking import DENSE_MIN_COSINE
from memory.store.protocol import MemoryStore
from memory.store.turns import TurnRow
from memory.text import tokenizer
from memory.vectors.index import OwnerVectors, blob_to_vector, vector_to_blob
from memory.vectors.usage import EmbeddingUse
from memory.writes import check_owner

log = logging.getLogger("tierclaw.memory")

ROLES = ("user", "assistant")
# bm25 picks candidates; they are re-ranked by how many of the query's words they hold (a turn that holds
# all of them first), bm25 breaking ties. LoCoMo turns: bench/README.md, "Conversation search".
CANDIDATES_PER_HIT = 6
MIN_CANDIDATES = 30
LAST_WORDS_KEPT = 10_000  # chats whose last turn's words are kept in memory
# With turn vectors: the turns closest in meaning (cosine at least ranking.DENSE_MIN_COSINE) join the word
# matches as candidates, and how far a candidate's cosine is above that floor adds to its word score with
# this weight (tuned on LoCoMo turns: bench/README.md, "Conversation search").
DENSE_TURN_CANDIDATES = 30
DENSE_WEIGHT = 0.5
# A turn found by meaning alone (no word of the query in it, or in the turn before) is a result only when
# its cosine stands this far above the median of the owner's turns: e5's cosines crowd (a word never said,
# "zebra", is ~0.78 from every turn), and a turn merely as close as all the others matches nothing
# (issue 37; bench/README.md, "Conversation search").
DENSE_ONLY_LIFT = 0.04
ANSWER_LEAD = 0.001  # how far above its question an answer is placed (scores are rounded to 0.001)
TURN_VECTOR_OWNERS_KEPT = 16  # owners whose turn vectors stay loaded (oldest use dropped first)
TURN_TIER = 0  # turn vectors share memories' matrix type, in a tier of their own
# A turn at least this long is segmented (jieba, pure Python: p50 13-19 ms for bench.streaming's 1.7 kB
# English and 320-character Chinese replies on a busy 2-core machine) in a thread of its own, not in the
# event loop's: fifty replies ending at once otherwise hold up every other chat's frames and intake
# (bench/README.md, "Streaming"). A shorter one (a person's message, mostly segmented already by recall's
# query) is cheaper than the thread hop.
SEGMENT_OFF_LOOP_CHARS = 200
# One thread: segmentations queue there in order instead of taking threads other work needs (the default
# executor), and jieba's pure-Python work would only take turns on the GIL in more of them.
_SEGMENTER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tierclaw-segment")


def asks(text: str) -> bool:
    """Whether a turn ends by asking something (a question mark, Western or full-width), so the turn
    after it is the reply. One that asks along the way and goes on says its own piece."""
    return text.rstrip().endswith(("?", "？"))


_QUERY_EDGES = " \t?!.,;:'\"“”‘’？！。，；：、"


def says_exactly(query: str, text: str) -> bool:
    """Whether ``text`` holds ``query`` as typed: case and spacing aside, not inside a longer word
    ("cat" is not in "category"; Chinese, written without spaces, matches anywhere)."""
    wanted = " ".join(query.casefold().split()).strip(_QUERY_EDGES)
    if not wanted:
        return False
    before = r"(?<![0-9a-z_])" if wanted[0].isascii() and wanted[0].isalnum() else ""
    after = r"(?![0-9a-z_])" if wanted[-1].isascii() and wanted[-1].isalnum() else ""
    return re.search(before + re.escape(wanted) + after, " ".join(text.casefold().split())) is not None


def rerank(
    rows: list[tuple[TurnRow, float, str]],
    weights: dict[str, float],
    cosines: dict[int, float] | None = None,
    answers: dict[int, int] | None = None,
    stand_out: set[int] | None = None,
    phrase: str = "",
) -> list[tuple[TurnRow, float]]:
    """The matching turns of ``rows`` (turn, text score — bm25 as in ``store/search.Candidate``, higher is
    better —, indexed text) with their scores, best first.

    A turn's score is the idf-weighted share of the query's terms it holds itself plus the share it holds
    with the turn before it (``weights``: term -> idf), plus ``DENSE_WEIGHT`` times its cosine with the
    query when ``cosines`` has one; the text score breaks ties. ``answers`` (question turn id -> the turn
    after it) puts an answer just above its question when the question matches by its own words or meaning: a
    matching question only restates what was asked, the turn after it holds what was said in reply
    ("How long have you been married?" -> "5 years already!").

    A turn that says ``phrase`` (the query as typed: ``says_exactly``) ranks first — whoever searches
    "Harriet" wants the turns that say Harriet before the replies to them; then every turn that matches
    by its own words or meaning (or answers such a question), above every turn found only through the
    turn before it. Meaning alone counts only for the turns in ``stand_out`` (``DENSE_ONLY_LIFT``; None:
    every turn with a cosine), and a turn that matches by nothing (score 0: the reply to a reply, a turn
    no closer to "zebra" than all the others) is not returned at all."""
    cosines = cosines or {}
    stand_out = set(cosines) if stand_out is None else stand_out

    def meaning(turn_id: int) -> float:
        # 0 at the floor, 1 for the same direction (e5 cosines crowd 0.75–0.9: the floor spreads them).
        cosine = cosines.get(turn_id, 0.0)
        return max(0.0, cosine - DENSE_MIN_COSINE) / (1.0 - DENSE_MIN_COSINE)

    total = sum(weights.values()) or 1.0

    def coverage(words: set[str]) -> float:
        return sum(w for term, w in weights.items() if term in words) / total

    scores: dict[int, float] = {}
    direct: set[int] = set()  # matches by its own words or meaning
    exact: set[int] = set()  # says the query as typed
    for turn, _text_score, indexed in rows:
        own = coverage(set(tokenizer.index_text(turn.content).split()))
        through = coverage(set(indexed.split()))
        dense = meaning(turn.id)
        if own == 0 and through == 0 and turn.id not in stand_out:
            dense = 0.0  # no closer than every other turn: meaning alone is no match
        scores[turn.id] = round(own + through + DENSE_WEIGHT * dense, 3)
        if own > 0 or (dense > 0 and turn.id in stand_out):
            direct.add(turn.id)
        if phrase and says_exactly(phrase, turn.content):
            exact.add(turn.id)
    lifted = {a for q, a in (answers or {}).items() if q in direct and a in scores}  # one step, no chains
    for question, answer in (answers or {}).items():
        if answer in lifted and question in direct:
            scores[answer] = max(scores[answer], scores[question] + ANSWER_LEAD)
    direct |= lifted
    found = [row for row in rows if scores[row[0].id] > 0]
    found.sort(key=lambda row: (row[0].id not in exact, row[0].id not in direct, -scores[row[0].id], row[1]))
    return [(turn, scores[turn.id]) for turn, _bm25, _indexed in found]


@dataclass(slots=True)
class ConversationHit:
    """One matching turn, its score (``rerank``'s, higher is better, always above 0) and the turns around it
    in its chat, in order."""

    turn: TurnRow
    score: float
    context: list[TurnRow] = field(default_factory=list)


class ConversationLog:
    """Keeps and searches the owner's turns (``engine.conversation``)."""

    def __init__(self, store: MemoryStore, embedding: EmbeddingUse | None = None) -> None:
        self._store = store
        self._embedding = embedding or EmbeddingUse()
        # Loaded turn vectors per owner (and the model they belong to), most recently used last.
        self._vectors: dict[str, tuple[str, OwnerVectors, int]] = {}
        # Each chat's last turn, as indexed words, so the next turn need not read and segment it again.
        self._last_words: dict[tuple[str, str, str], str] = {}

    async def record(
        self, owner: str, *, channel: str, chat_id: str, role: str, content: str, now: datetime | None = None
    ) -> int:
        """Keep one turn (the user's words or the assistant's reply); returns its id."""
        check_owner(owner)
        if role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
        search_text = (await self.index_texts(owner, channel, chat_id, [content]))[0]
        return await self._store.turns.add(
            owner,
            channel=channel,
            chat_id=chat_id,
            role=role,
            content=content,
            search_text=search_text,
            at=to_db(now or utcnow()),
        )

    async def index_texts(self, owner: str, channel: str, chat_id: str, contents: Sequence[str]) -> list[str]:
        """The indexed text of each of the chat's next turns, in order, as ``record`` keeps it (for a
        caller writing them itself: ``memory/exchange.py``). A turn is also found by the words of the turn
        it answers ("When did you go?" → "Yesterday."): its index holds the previous turn's words too,
        after its own; the chat's last turn is read once, then remembered here."""
        long = [c for c in contents if len(c) >= SEGMENT_OFF_LOOP_CHARS]
        if long:
            await asyncio.get_running_loop().run_in_executor(_SEGMENTER, _segment_all, long)
        chat = (owner, channel, chat_id)
        previous = self._last_words.get(chat)
        if previous is None:
            last = await self._store.turns.last_in_chat(owner, channel, chat_id)
            previous = tokenizer.index_text(last.content) if last is not None else ""
        texts = []
        for content in contents:
            own = tokenizer.index_text(content)  # a long one's segments are cached by now
            texts.append(f"{own} {previous}" if previous else own)
            previous = own
        if len(self._last_words) >= LAST_WORDS_KEPT:
            self._last_words.pop(next(iter(self._last_words)))  # the chat that spoke longest ago
        self._last_words.pop(chat, None)
        self._last_words[chat] = previous
        return texts

    async def search(
        self,
        owner: str,
        query: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 5,
        context: int = 1,
    ) -> list[ConversationHit]:
        """The owner's turns that best match ``query``, each with ``context`` turns either side; a turn
        already shown around a better hit is not repeated as a hit of its own (the next one is taken)."""
        check_owner(owner)
        terms = tokenizer.query_terms(query)
        window = (to_db(since) if since else None, to_db(until) if until else None)
        rows = []
        if terms:
            rows = await self._store.turns.matches(
                owner,
                terms,
                since=window[0],
                until=window[1],
                limit=max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES),
            )
        cosines, stand_out = await self._nearest(owner, query)
        if cosines:
            rows = _joined(rows, await self._store.turns.indexed(owner, list(cosines)), window)
        if not rows:
            return []
        # The turn after each question among the candidates joins them (rerank puts it above).
        following = await self._store.turns.following(owner, [r[0].id for r in rows if asks(r[0].content)])
        rows = _joined(rows, list(following.values()), window)
        answers = {question: row[0].id for question, row in following.items()}
        frequencies = await self._store.turns.document_frequencies(terms)
        n = await self._store.turns.total()
        weights = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequencies.items()}
        hits: list[ConversationHit] = []
        shown: set[int] = set()  # turns already in an earlier hit's window are not a hit again
        for turn, score in rerank(rows, weights, cosines, answers, stand_out, phrase=query):
            if len(hits) == limit:
                break
            if turn.id in shown:
                continue
            around = await self._store.turns.neighbours(owner, turn, context, context) if context else [turn]
            shown.update(t.id for t in around)
            hits.append(ConversationHit(turn, score, around))
        log.info("[memory] conversation search owner=%s hits=%d", owner, len(hits))
        return hits

    async def _nearest(self, owner: str, query: str) -> tuple[dict[int, float], set[int]]:
        """The owner's turns closest to ``query`` in meaning (id -> cosine), and those of them that stand
        out from the rest (``DENSE_ONLY_LIFT`` above the median turn); empty without an embedder, without
        turn vectors, or when the query could not be embedded (then words alone decide)."""
        embedder = self._embedding.embedder
        if embedder is None:
            return {}, set()
        vectors = await self._loaded(owner, embedder.model_key)
        if not len(vectors):
            return {}, set()
        query_vector = await self._embedding.query(query)
        if query_vector is None:
            return {}, set()
        nearest = vectors.top(query_vector, DENSE_TURN_CANDIDATES, (TURN_TIER,))
        cosines = {turn_id: cosine for turn_id, cosine in nearest if cosine >= DENSE_MIN_COSINE}
        floor = (vectors.median_similarity(query_vector, (TURN_TIER,)) or 0.0) + DENSE_ONLY_LIFT
        return cosines, {turn_id for turn_id, cosine in cosines.items() if cosine >= floor}

    async def _loaded(self, owner: str, model_key: str) -> OwnerVectors:
        """The owner's turn vectors, loaded once and topped up with those stored since."""
        model, vectors, last_id = self._vectors.pop(owner, (model_key, OwnerVectors.build([]), 0))
        if model != model_key:
            vectors, last_id = OwnerVectors.build([]), 0
        for turn_id, blob in await self._store.turns.vectors(owner, model_key, after_id=last_id):
            vector = blob_to_vector(blob)
            if vector is not None:
                vectors.append(turn_id, TURN_TIER, vector)
            last_id = max(last_id, turn_id)
        self._vectors[owner] = (model_key, vectors, last_id)
        while len(self._vectors) > TURN_VECTOR_OWNERS_KEPT:
            self._vectors.pop(next(iter(self._vectors)))
        return vectors

    # ----------------------------------------------------------------- what the backfill fills
    # (the same three methods as the engine's for memories: ``memory/vectors/reindex.VectorTarget``)

    async def missing_embeddings(
        self, model_key: str, *, after_id: int = 0, limit: int = 256, owner: str | None = None
    ) -> list[tuple[int, str, str]]:
        """Turns without a ``model_key`` vector: (id, owner, content), by id."""
        return await self._store.turns.missing_vectors(model_key, after_id=after_id, limit=limit, owner=owner)

    async def count_missing_embeddings(self, model_key: str, owner: str | None = None) -> int:
        """How many turns have no ``model_key`` vector."""
        return await self._store.turns.count_missing_vectors(model_key, owner)

    async def set_embeddings(self, model_key: str, items: Sequence[tuple[int, str, np.ndarray]]) -> int:
        """Store (turn id, content, vector) items; returns how many turns were still there."""
        return await self._store.turns.set_vectors(
            model_key, [(turn_id, vector_to_blob(vector)) for turn_id, _, vector in items]
        )

    async def all_turns(self, owner: str, page: int = 1000) -> list[TurnRow]:
        """Every kept turn of the owner, oldest first (export)."""
        check_owner(owner)
        out: list[TurnRow] = []
        while True:
            rows = await self._store.turns.page(owner, out[-1].id if out else 0, page)
            out += rows
            if len(rows) < page:
                return out

    async def count(self, owner: str | None = None) -> int:
        """Kept turns of one owner, or of everyone."""
        return await self._store.turns.count(owner)

    async def prune(self, keep_days: int, now: datetime | None = None) -> int:
        """Delete turns older than ``keep_days`` (``memory.turnRetentionDays``); returns how many."""
        cutoff = (now or utcnow()) - timedelta(days=keep_days)
        removed = await self._store.turns.prune(to_db(cutoff))
        if removed:
            log.info("[memory] pruned %d conversation turns older than %d days", removed, keep_days)
        return removed


def _segment_all(texts: Sequence[str]) -> None:
    """Segment ``texts`` in the segmenter's thread (``_SEGMENTER``): ``tokenizer.index_text`` then finds
    their segments in ``tokenizer.segment``'s cache, and only stems them in the loop thread (the English
    stemmer keeps state while it works on a word: one thread uses it)."""
    for text in texts:
        tokenizer.segment(text)


def _joined(
    rows: list[tuple[TurnRow, float, str]],
    extra: list[tuple[TurnRow, float, str]],
    window: tuple[str | None, str | None],
) -> list[tuple[TurnRow, float, str]]:
    """``rows`` and those of ``extra`` that are not among them yet and were said within ``window``."""
    seen = {row[0].id for row in rows}
    return rows + [r for r in extra if r[0].id not in seen and _within(r[0], window)]


def _within(turn: TurnRow, window: tuple[str | None, str | None]) -> bool:
    """Whether the turn was said within ``[since, until)`` (stored forms; None: open)."""
    since, until = window
    return (since is None or turn.created_at >= since) and (until is None or turn.created_at < until)
