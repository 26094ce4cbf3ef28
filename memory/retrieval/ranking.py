"""Ranking of retrieval candidates: pure functions, no I/O (docs/architecture.md, "Retrieval").

The constants were chosen on LoCoMo and MADial-Bench (``python -m bench.retrieval_quality``); each one's
comment says what it does and why it has its value.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memory.clock import from_db
from memory.records import Retrieved
from memory.retrieval.decay import relevance_score
from memory.store.search import Candidate
from memory.text.timeref import TimeWindow

# How many FTS candidates are ranked in Python after bm25 has ordered them.
FTS_CANDIDATES = 50
# How many rows of a matched project partition, or of a named time window, join the candidates (the
# original design's partitioned query takes 20).
PARTITION_CANDIDATES = 20
# Terms found in more than this share of all indexed rows are dropped from the MATCH when rarer terms
# exist: they add little to bm25 but make SQLite walk long posting lists (100 ms at 100k rows).
COMMON_TERM_SHARE = 0.05
COMMON_TERM_FLOOR = 200
# Text relevance of a candidate = (bm25 / best bm25 + COVERAGE_WEIGHT * coverage) / (1 + COVERAGE_WEIGHT),
# times (1 + PROXIMITY_WEIGHT * adjacent query-word pairs it contains). Coverage (the idf-weighted share
# of query terms present) and proximity ("homeless shelter" as a phrase) re-rank bm25's top candidates;
# chosen on LoCoMo and MADial-zh (bench/retrieval_quality.py), where each helps both languages.
COVERAGE_WEIGHT = 2.0
PROXIMITY_WEIGHT = 0.3
# Weight of the category decay score against text relevance: final = text * (1 + DECAY_WEIGHT * decay).
# Small on purpose: an old memory that answers the question must beat a fresh one that does not.
DECAY_WEIGHT = 0.1
# Text relevance given to a partition row that matched the project but no query term.
PARTITION_ONLY_TEXT = 0.25
# Multiplier bonus for a memory written inside the time window the message names ("in March 2023").
TIME_WINDOW_BOOST = 2.0
# Text relevance of a memory inside the window that matched no query term ("what did I say yesterday?").
WINDOW_ONLY_TEXT = 0.2
# Hybrid ranking (with an embedder): the FTS ranking above and the cosine ranking of the owner's
# vectors are fused by weighted reciprocal rank, fused = 1/(RRF_K + text rank) + DENSE_WEIGHT/(RRF_K +
# dense rank), then decay on top as above. Chosen on LoCoMo and MADial zh/en (bench/README.md: ranks
# beat score mixing because bm25 and cosine scales differ per query; a small k trusts the top ranks).
RRF_K = 3
DENSE_WEIGHT = 1.5
DENSE_CANDIDATES = 50
# e5 cosines live in a narrow band (top hits 0.78–0.90); below this a vector hit is noise.
DENSE_MIN_COSINE = 0.75


# The fewest vector candidates whose median a hit for an other message is measured against
# (``RelevanceFloor.other_lift``): a person with fewer memories near the message is not held to it.
OTHER_LIFT_MIN_POOL = 5


@dataclass(frozen=True, slots=True)
class RelevanceFloor:
    """How relevant a hit must be to be injected into a reply (``memory.relevanceFloor``).

    Ranking always has a top k, even for "how was your weekend?"; the floor is what keeps chit-chat free
    of memories, so the gate can lean towards recall. Ranks and fused scores say nothing absolute, so the
    floor is on the two absolute signals a hit has: ``match``, the idf-weighted share of the query's terms
    it contains, and (hybrid) ``cosine``, its vector similarity to the query. Keyword-only, a hit needs
    ``keyword_match``; hybrid, ``hybrid_match`` or ``hybrid_cosine``, or a cosine ``hybrid_lift`` above the
    median of the query's vector candidates (``admits``). ``for_message``: that lift only for a question about
    the person's own life; for any other message ``other_match`` as the hybrid share, and however a hit is
    admitted it must stand ``other_lift`` above that median (a veto, not a way in).

    Chinese queries get their own values: e5's cosines between Chinese texts sit higher than between
    English ones, and an implicit Chinese question shares few words with the memory it needs, so a match
    floor that costs English little costs Chinese most of its recall. The defaults (``gateway/config``)
    were chosen with ``python -m bench.conversation_recall --sweep`` on LoCoMo first-person with
    DailyDialog and MADial zh with LCCC; bench/README.md has the table.
    """

    keyword_match: float = 0.0
    hybrid_match: float = 0.0
    hybrid_cosine: float = 0.0
    keyword_match_zh: float = 0.0
    hybrid_cosine_zh: float = 0.0
    hybrid_lift: float = 0.0
    other_match: float = 0.0
    other_cosine: float = 0.0
    other_cosine_zh: float = 0.0
    rescue_lift: float = 0.0
    rescue_lift_zh: float = 0.0
    rescue_gap: float = 0.0
    other_lift: float = 0.0
    other_lift_zh: float = 0.0
    # Set by ``for_message`` for a message that does not ask about the person's own life: the hit must
    # also stand ``other_lift`` (``other_lift_zh``) above the median of the query's vector candidates.
    other: bool = False

    def for_message(self, personal: bool) -> RelevanceFloor:
        """The floor for one message: as it is for a question about the person's own life (the gate's
        ``asks_own``); for any other message the gate let through (chatter, a question about the world,
        narrative) no stand-out rule, a hybrid keyword share of at least ``other_match`` and a cosine of
        at least ``other_cosine`` (``other_cosine_zh`` for a Chinese query).

        Such a message shares a word or two with some memory far more often than it needs one: on the
        project's written training people (``rerank_written.json``) and the training halves' chit-chat
        questions a share up to 0.4 lost no ask and kept fewer chit-chat lines' memories
        (memory/retrieval/DATA_CARD_RERANK.md, "The floor for other messages"); and one close in meaning
        to a memory about the same things ("is this shampoo any good for dandruff?" beside "I have
        dandruff") far more often than it asks for it, so it may have a cosine cut of its own (round 25,
        same card: off as configured — the cut the training data chose cost more answers than chatter).
        Whichever admits it, such a memory must also stand ``other_lift`` (``other_lift_zh``) above the
        median cosine of the query's candidates (round 34, same card): a line that shares a word with
        one memory ("can cats eat chicken?" beside "Mum's cat is a ginger tom") is rarely nearer to it
        in meaning than to the person's other memories, a question that needs it is.
        """
        if personal:
            return self
        return replace(
            self,
            other=True,
            hybrid_lift=0.0,
            hybrid_match=max(self.hybrid_match, self.other_match),
            hybrid_cosine=max(self.hybrid_cosine, self.other_cosine),
            hybrid_cosine_zh=max(self.hybrid_cosine_zh, self.other_cosine_zh),
        )

    def rescues(self, lift: float, gap: float, *, chinese: bool) -> bool:
        """Whether a message the gate refused still gets the memory nearest to it: the memory stands
        ``rescue_lift`` (``rescue_lift_zh``) above the median of the person's memories and ``rescue_gap``
        above the next one (``OwnerVectors.stand_out``). A lift of 0 turns the rescue off.

        The head refuses some questions about the person's own life that name nothing it learned as
        asking (issue 35); when one memory is far nearer to such a message than all the others, the
        message is very likely about it, while small talk is rarely that close to one memory. The cuts
        are chosen on training data with ``python -m bench.floor_rescue`` (bench/README.md).
        """
        least = self.rescue_lift_zh if chinese else self.rescue_lift
        return least > 0 and lift >= least and gap >= self.rescue_gap

    def admits(
        self,
        hit: Retrieved,
        *,
        hybrid: bool,
        chinese: bool = False,
        pool_median: float = 0.0,
        pool: int | None = None,
    ) -> bool:
        """Whether ``hit`` is relevant enough for a retrieval in this mode, for a query in this language.

        ``pool_median``: the median cosine of the query's vector candidates. A hit whose cosine stands
        ``hybrid_lift`` above it stands out from the rest of the person's memories: the gate has already
        decided memory is wanted, and on the bundled model an absolute cut sits on a cliff (issue 26).
        ``pool``: how many candidates that median is of (an other message's lift, ``_lifted_for_other``).
        """
        if hybrid:
            cosine = self.hybrid_cosine_zh if chinese else self.hybrid_cosine
            stands_out = (
                self.hybrid_lift > 0 and pool_median > 0 and hit.cosine - pool_median >= self.hybrid_lift
            )
            if self.other and not self._lifted_for_other(hit, chinese, pool_median, pool):
                return False
            return hit.match >= self.hybrid_match or hit.cosine >= cosine or stands_out
        return hit.match >= (self.keyword_match_zh if chinese else self.keyword_match)

    def _lifted_for_other(self, hit: Retrieved, chinese: bool, pool_median: float, pool: int | None) -> bool:
        """Whether a hit for another message stands far enough above the query's candidates: yes when no
        lift is asked, or there is no median to measure it by — none, or one of fewer than
        ``OTHER_LIFT_MIN_POOL`` candidates (``pool``; None: not known), which is the hit's own cosine or
        its neighbour's. A memory without a vector yet (the backfill fills it) has cosine 0: not shown
        for such a message until it has one."""
        least = self.other_lift_zh if chinese else self.other_lift
        if least <= 0 or pool_median <= 0 or (pool is not None and pool < OTHER_LIFT_MIN_POOL):
            return True
        return hit.cosine - pool_median >= least


NO_FLOOR = RelevanceFloor()


@dataclass(slots=True)
class Pool:
    """The candidates of one query: id -> (row, normalised bm25 in (0, 1], lowest text score it may get)."""

    rows: dict[int, tuple[Candidate, float, float]]

    @classmethod
    def from_matches(cls, matches: list[Candidate]) -> Pool:
        """Full-text matches, their text score (bm25) normalised against the best one."""
        best = max((r.text_score for r in matches), default=0.0)
        return cls({r.id: (r, (r.text_score / best) if best > 0 else 0.0, 0.0) for r in matches})

    def add(self, rows: Iterable[Candidate], floor: float) -> None:
        """Rows found another way (partition, time window, vectors), unless already in the pool."""
        for row in rows:
            self.rows.setdefault(row.id, (row, 0.0, floor))


def term_weights(document_frequencies: dict[str, int], indexed_rows: int) -> dict[str, float]:
    """idf of each term over the whole index (df 0, a term no memory has, gets the highest weight)."""
    n = max(indexed_rows, 1)
    return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in document_frequencies.items()}


def selective_terms(weights: dict[str, float], indexed_rows: int) -> tuple[list[str], bool]:
    """Terms worth matching, and whether they are all very common.

    Terms no memory contains are dropped; very common terms are dropped when rarer ones exist. When only
    common terms remain, the three rarest are kept and the flag says so: bm25 barely separates rows
    then, and scoring thousands of them would cost milliseconds.
    """
    n = max(indexed_rows, 1)
    absent = math.log(1.0 + (n + 0.5) / 0.5)  # the weight of a term no memory contains
    present = {t: w for t, w in weights.items() if w < absent - 1e-9}
    if not present:
        return [], False
    cap = max(COMMON_TERM_FLOOR, COMMON_TERM_SHARE * n)
    # idf is monotone in df, so a df cap is an idf floor.
    idf_floor = math.log(1.0 + (n - cap + 0.5) / (cap + 0.5)) if cap < n else 0.0
    rare = [t for t, w in present.items() if w >= idf_floor]
    if rare:
        return rare, False
    return sorted(present, key=lambda t: -present[t])[:3], True


# A memory that holds only a related word of a query word ("manager" for "boss") counts this share of the
# word's weight; one that holds the word itself counts all of it. When the query's own words left it (an
# ask form such as "for a living"), the related words count fully. Chosen with bench.everyday and
# bench.conversation_recall (bench/README.md, "The everyday loop"): at full weight, related words let
# chit-chat pass the match floor more often (LoCoMo/DailyDialog injection 0.094 -> 0.107).
RELATED_WEIGHT = 0.5


def group_match(group: frozenset[str], own: frozenset[str], words: set[str]) -> float:
    """How much of a term group a memory's ``words`` hold: 1 for the query's own word (or any member of a
    group the query named only by an ask form), ``RELATED_WEIGHT`` for a related word only, else 0."""
    if group.isdisjoint(words):
        return 0.0
    if not own or not own.isdisjoint(words):
        return 1.0
    return RELATED_WEIGHT


def group_weights(
    groups: tuple[tuple[str, ...], ...], weights: dict[str, float]
) -> list[tuple[frozenset[str], float]]:
    """Each term group (``relations.expand``) with its weight: the idf of its rarest member that some
    memory holds, else the weight of a term no memory holds (as a single unknown word weighs)."""
    absent = max(weights.values(), default=1.0)
    out: list[tuple[frozenset[str], float]] = []
    for group in groups:
        present = [weights[t] for t in group if t in weights and weights[t] < absent - 1e-9]
        out.append((frozenset(group), max(present) if present else absent))
    return out


def match_project(lowered: str, terms: tuple[str, ...], projects: frozenset[str]) -> str | None:
    """The known project the message names (as a term, or as a substring for multi-word names)."""
    term_set = set(terms)
    for name in sorted(projects, key=len, reverse=True):
        low = name.lower()
        if low in term_set or (len(low) >= 3 and low in lowered):
            return name
    return None


def window_bounds(window: TimeWindow) -> tuple[str, str]:
    """Stored-timestamp bounds [start 00:00, day after end 00:00) for a date window."""
    return f"{window.start.isoformat()} 00:00:00", f"{(window.end + timedelta(days=1)).isoformat()} 00:00:00"


def rank(
    pool: Pool,
    *,
    weights: dict[str, float],
    query_tokens: tuple[str, ...],
    window: TimeWindow | None,
    dense_rank: dict[int, int],
    min_match: float,
    now: datetime,
    k: int,
    dense_cosine: dict[int, float] | None = None,
    floor: RelevanceFloor = NO_FLOOR,
    hybrid: bool = False,
    chinese: bool = False,
    groups: tuple[tuple[str, ...], ...] | None = None,
    exact: frozenset[str] | None = None,
    reorder: Callable[[list[Retrieved]], list[Retrieved]] | None = None,
) -> list[Retrieved]:
    """Score every candidate (text relevance, time window, fusion with the vector ranking, decay); top k.

    ``groups``: the query's term groups (``relations.expand``; default one per term of ``weights``): a
    candidate matches a group when it holds any of its terms (``exact``, the query's own terms, count
    fully; a related term ``RELATED_WEIGHT``). ``min_match`` drops keyword-only hits
    whose idf-weighted share of the query's groups is below it;
    ``floor`` drops every hit not relevant enough before the top k (``hybrid``: the query had a vector;
    ``chinese``: it is written in Chinese). ``reorder``: applied to the top ``k``, best first (the learned
    re-ranker, ``rerank.py``: it changes their order, never which hits are returned).
    """
    cosines = dense_cosine or {}
    scored = _scored(
        pool, match_scorer(weights, groups, exact), query_tokens, window, dense_rank, min_match, now
    )
    if dense_rank:
        fused = fuse_ranks(scored, dense_rank)
    else:
        fused = {row.id: text_score for row, text_score, _, _ in scored}
    # Best first (score, then the newer id), and a hit made only for the candidates looked at until k
    # pass the floor: ~55 candidates a query, most never returned (bench/README.md, "Gateway CPU",
    # stop 51). The same hits as making every one, filtering, sorting and cutting.
    order = sorted(
        ((fused[row.id] * (1.0 + DECAY_WEIGHT * decay), row, match) for row, _, match, decay in scored),
        key=lambda s: (-s[0], -s[1].id),
    )
    median = statistics.median(cosines.values()) if cosines else 0.0
    hits: list[Retrieved] = []
    for score, row, match in order:
        if 0 < k <= len(hits):
            break
        hit = retrieved(row, score, match, cosines.get(row.id, 0.0))
        if floor.admits(hit, hybrid=hybrid, chinese=chinese, pool_median=median, pool=len(cosines)):
            hits.append(hit)
    if reorder is not None:
        return reorder(hits[:k])
    return hits[:k]


def _scored(
    pool: Pool,
    match_of: Callable[[set[str]], float],
    query_tokens: tuple[str, ...],
    window: TimeWindow | None,
    dense_rank: dict[int, int],
    min_match: float,
    now: datetime,
) -> list[tuple[Candidate, float, float, float]]:
    """(row, text score, match, decay) of every candidate ``rank`` keeps (``min_match`` or a vector hit);
    ``match_of``: the share of the query's groups a memory's words hold (``match_scorer``)."""
    query_pairs = set(itertools.pairwise(query_tokens))
    bounds = window_bounds(window) if window is not None else None
    scored: list[tuple[Candidate, float, float, float]] = []  # row, text score, match, decay
    for row, bm25_share, lowest in pool.rows.values():
        tokens = row.search_text.split()
        words = set(tokens)
        match = match_of(words)
        if match < min_match and row.id not in dense_rank:
            continue
        proximity = len(query_pairs.intersection(itertools.pairwise(tokens)))
        text_score = (bm25_share + COVERAGE_WEIGHT * match) / (1.0 + COVERAGE_WEIGHT)
        text_score = max(text_score * (1.0 + PROXIMITY_WEIGHT * proximity), lowest)
        if bounds is not None and bounds[0] <= row.created_at < bounds[1]:
            text_score *= 1.0 + TIME_WINDOW_BOOST
        decay = relevance_score(row.category, row.importance, _days_idle(row.last_accessed, now))
        scored.append((row, text_score, match, decay))
    return scored


# Parsed access times kept between rankings (``_days_idle``); cleared whole when full. A query ranks ~55
# candidates whose ``last_accessed`` mostly did not change since the last query that saw them (92 % of the
# stamps of bench.gateway_throughput's 794 rankings had been parsed before).
_ACCESSED_KEPT = 8192
_accessed: dict[str, datetime] = {}


def _days_idle(stamp: str, now: datetime) -> float:
    """``memory.clock.days_between(stamp, now)``, each stamp parsed once (``from_db``: ~2–6 µs a candidate
    on the reply path, bench/README.md "Gateway CPU", stop 52); the same days."""
    moment = _accessed.get(stamp)
    if moment is None:
        if len(_accessed) >= _ACCESSED_KEPT:
            _accessed.clear()
        moment = _accessed[stamp] = from_db(stamp)
    return max(0.0, (now - moment).total_seconds() / 86400.0)


def match_scorer(
    weights: dict[str, float], groups: tuple[tuple[str, ...], ...] | None, exact: frozenset[str] | None
) -> Callable[[set[str]], float]:
    """The idf-weighted share of the query's term groups a memory's words hold (``group_match`` each)."""
    weighted = group_weights(groups if groups is not None else tuple((t,) for t in weights), weights)
    own_terms = set(weights) if exact is None else exact
    owns = [group & own_terms for group, _ in weighted]
    total_weight = sum(w for _, w in weighted) or 1.0
    # Most candidates hold none of the query's terms (63 % with vector candidates): they score 0.0 at
    # once, as every group's 0 would add up to.
    any_term = frozenset().union(*(group for group, _ in weighted))

    def match(words: set[str]) -> float:
        if any_term.isdisjoint(words):
            return 0.0
        held = sum(w * group_match(g, own, words) for (g, w), own in zip(weighted, owns, strict=True))
        return held / total_weight

    return match


def retrieved(row: Candidate, score: float, match: float, cosine: float) -> Retrieved:
    """A candidate row as a hit with its scores."""
    return Retrieved(
        id=row.id,
        content=row.content,
        tier=row.tier,
        project=row.project,
        topic=row.topic,
        category=row.category,
        importance=row.importance,
        created_at=row.created_at,
        score=score,
        match=match,
        cosine=cosine,
    )


def fuse_ranks(
    scored: list[tuple[Candidate, float, float, float]], dense_rank: dict[int, int]
) -> dict[int, float]:
    """Weighted reciprocal-rank fusion of the keyword ranking (text score) and the cosine ranking.

    Ranks, not scores: bm25-derived text scores and cosines have unrelated, query-dependent scales, and
    on the dev sets rank fusion beat every tried mix of normalised scores (bench/README.md).
    """
    by_text = sorted((s for s in scored if s[1] > 0), key=lambda s: (-s[1], -s[0].id))
    text_rank = {s[0].id: position for position, s in enumerate(by_text, start=1)}
    fused: dict[int, float] = {}
    for row, _, _, _ in scored:
        score = 0.0
        if row.id in text_rank:
            score += 1.0 / (RRF_K + text_rank[row.id])
        if row.id in dense_rank:
            score += DENSE_WEIGHT / (RRF_K + dense_rank[row.id])
        fused[row.id] = score
    return fused
