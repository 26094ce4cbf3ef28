"""The learned re-ranker of the first hybrid hits (``memory/retrieval/rerank.py``), its training pairs
(``rerank_pairs.py``) and its trainer (``train_rerank.py``).

Real parts: the shipped weights file, the real local model through the engine (both stores) for the
end-to-end case. The small hand-built ``Reranker`` below is the real class with weights a test can reason
about (a model that prefers one direction of the vector space), not a stand-in for it.
"""

from __future__ import annotations

import json
import os
import pathlib
from collections.abc import AsyncIterator, Iterator

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.head.train import evaluation_texts
from memory.records import Fact, Retrieved
from memory.retrieval import rerank, retriever, train_rerank
from memory.retrieval.rerank_pairs import Pair, asked_question, first_person
from memory.retrieval.rerank_written import WRITTEN_FILE, is_written, written_pairs
from memory.retrieval.retriever import _reranking
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LocalEmbedder
from memory.vectors.index import OwnerVectors
from tests.support.hybrid import GENEROUS_TIMEOUT

DIM = 8


def _hit(memory_id: int, score: float, match: float = 0.0) -> Retrieved:
    return Retrieved(
        id=memory_id,
        content=f"memory {memory_id}",
        tier=2,
        project="",
        topic="",
        category="identity",
        importance=0.5,
        created_at="2026-11-01 00:00:00",
        score=score,
        match=match,
    )


def _unit(index: int) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[index] = 1.0
    return vector


def _prefers(direction: int) -> rerank.Reranker:
    """A model that scores a memory by its component along ``direction`` (the diagonal term only)."""
    d = np.zeros(DIM, dtype=np.float32)
    d[direction] = 10.0
    zeros = np.zeros((2, DIM), dtype=np.float32)
    return rerank.Reranker(np.zeros(len(rerank.FEATURES), dtype=np.float32), d, zeros, zeros, {})


def test_the_model_s_choice_comes_first_and_scores_still_fall_down_the_list() -> None:
    hits = [_hit(1, 0.9), _hit(2, 0.8), _hit(3, 0.7)]
    ids = np.array([3, 1, 2], dtype=np.int64)  # the owner's matrix in another order than the hits
    matrix = np.stack([_unit(5), _unit(0), _unit(1)])
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)

    ranked = rerank.rerank(hits, query, ids, matrix, _prefers(5))

    assert [h.id for h in ranked] == [3, 1, 2]
    assert [h.score for h in ranked] == [0.9, 0.8, 0.7]
    assert [h.id for h in hits] == [1, 2, 3]  # the input list is left as it was


def test_only_the_first_top_hits_move_and_a_hit_without_a_vector_moves_nothing() -> None:
    count = rerank.TOP + 3
    hits = [_hit(i, 1.0 - i / 100) for i in range(count)]
    ids = np.arange(count, dtype=np.int64)
    matrix = np.stack([_unit(0)] * (count - 1) + [_unit(3)])
    query = np.ones(DIM, dtype=np.float32) / np.sqrt(DIM)

    ranked = rerank.rerank(hits, query, ids, matrix, _prefers(3))
    assert [h.id for h in ranked] == list(range(count))  # the preferred memory is beyond TOP

    missing = rerank.rerank(hits, query, ids[1:], matrix[1:], _prefers(0))
    assert [h.id for h in missing] == list(range(count))


def test_the_shipped_weights_are_small_versioned_and_say_what_they_saw() -> None:
    model = rerank.load()
    assert model is not None and rerank.load() is model  # read once
    path = os.path.join(os.path.dirname(rerank.__file__), rerank.WEIGHTS_FILE)
    assert os.path.getsize(path) <= 2 * 2**20
    assert model.meta["version"] and model.meta["features"] == list(rerank.FEATURES)
    assert model.meta["training_pairs"] > 0 and set(model.meta["pairs_by_source"]) <= {
        "xpersona-zh",
        "xpersona-en",
        "synthetic-en",
        "written-en",
        "written-zh",
    }
    assert model.w.shape == (len(rerank.FEATURES),) and model.u.shape == model.v.shape
    # trained on lists of 7, what retrieval hands it at memory.topK 7 (bench/README.md, issue 35,
    # "rank13"), cosines centred (one centre a language)
    assert model.meta["top"] == 7 and model.meta["centre_weight"] == model.centre_weight > 0
    assert model.centres.shape == (2, model.d.shape[0])
    json.dumps(model.meta)


def test_centring_takes_off_what_a_memory_shares_with_the_average_question_nearest_the_query() -> None:
    centres = np.stack([_unit(0), _unit(1)])  # two "languages"
    query = np.array([0.9, 0.1, 0.4, 0, 0, 0, 0, 0], dtype=np.float32)  # nearest centre 0
    memories = np.stack([_unit(0) * 0.8 + _unit(2) * 0.6, _unit(2), _unit(1)])
    cosines = (memories * query).sum(axis=1)
    assert np.argmax(cosines) == 0  # the memory along the common direction wins on the raw cosine
    moved = rerank.centred(cosines, memories, query, centres, 1.0)
    assert np.argmax(moved) == 1  # what the question shares with it beyond what every question does
    assert moved[2] == pytest.approx(cosines[2])  # the other centre is not taken off
    assert rerank.centred(cosines, memories, query, centres, 0.0) is cosines
    assert rerank.centred(cosines, memories, query, np.zeros((0, DIM), dtype=np.float32), 1.0) is cosines


def test_a_weights_file_without_centres_loads_uncentred(tmp_path: pathlib.Path) -> None:
    zeros = np.zeros((0, DIM), dtype=np.float32)
    w = np.arange(len(rerank.FEATURES), dtype=np.float32)
    path = tmp_path / "old.npz"
    np.savez(path, w=w, d=np.ones(DIM, dtype=np.float32), u=zeros, v=zeros, meta=np.array("{}"))
    old = rerank.from_file(path)
    assert old.centre_weight == 0.0 and old.centres.shape == (0, DIM)
    assert np.array_equal(old.w, w)
    centres = np.stack([_unit(0), _unit(1)])
    rerank.Reranker(w, old.d, zeros, zeros, {}, centres, 0.5).save(tmp_path / "new.npz")
    new = rerank.from_file(tmp_path / "new.npz")
    assert new.centre_weight == 0.5 and np.array_equal(new.centres, centres)


@pytest.mark.parametrize(
    ("question", "lang", "mine"),
    [
        ("do you have pets?", "en", "do I have pets?"),
        ("What's your job?", "en", "What's my job?"),
        ("are you married?", "en", "am I married?"),
        ("what do you do for a living?", "en", "what do I do for a living?"),
        ("who do you live with?", "en", "who do I live with?"),
        ("你做什么工作的？", "zh", "我做什么工作的？"),
        ("您住在哪里？", "zh", "我住在哪里？"),
    ],
)
def test_a_question_to_the_other_speaker_is_turned_to_the_first_person(
    question: str, lang: str, mine: str
) -> None:
    assert first_person(question, lang) == mine


def test_only_a_question_about_the_other_speaker_with_a_topic_is_mined() -> None:
    assert asked_question("Hi there! Do you have any pets?", "en") == "Do you have any pets?"
    assert asked_question("I love dogs. What about you?", "en") is None  # no topic of its own
    assert asked_question("Is it raining there?", "en") is None  # not about the other speaker
    assert asked_question("我是老师。你呢？", "zh") is None
    assert asked_question("我是老师。你做什么工作的？", "zh") == "你做什么工作的？"


DATA = pathlib.Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


def test_written_pairs_ask_one_person_s_memories_in_both_languages() -> None:
    pairs = written_pairs()
    assert {p.source for p in pairs} == {"written-en", "written-zh"} and all(is_written(p) for p in pairs)
    people: dict[str, set[str]] = {}
    for pair in pairs:
        memories = {pair.line, *pair.negatives}
        assert pair.line not in pair.negatives and pair.question not in memories
        assert 15 <= len(memories) <= 40  # a person's memory list, the other memories the distractors
        assert people.setdefault(pair.persona_key, memories) == memories
    assert len(people) >= 12 and len(pairs) >= 400
    dropped = written_pairs(excluded={pairs[0].question})
    assert len(dropped) == len(pairs) - sum(p.question == pairs[0].question for p in pairs)


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_no_written_sentence_is_an_evaluation_text() -> None:
    banned = evaluation_texts(DATA, pathlib.Path(__file__).resolve().parents[3])
    data = json.loads(WRITTEN_FILE.read_text(encoding="utf-8"))
    texts = {t for person in data["people"] for t in person["memories"] + [q for q, _ in person["asks"]]}
    assert not texts & banned


def test_a_written_pair_s_candidates_are_its_person_s_memories_and_a_mined_pair_gets_filler() -> None:
    mined = [Pair(f"q{i}", f"line {i}", (f"other {i}",), "en", "xpersona-en", f"p{i}") for i in range(30)]
    person = Pair("q", "memory 0", tuple(f"memory {i}" for i in range(1, 17)), "en", "written-en", "w")
    sets = train_rerank.candidate_sets([*mined, person])
    assert sets[-1] == ["memory 0", *person.negatives]  # no filler from other people
    assert len(sets[0]) == train_rerank.CANDIDATES and not any(s.startswith("memory") for s in sets[0])


def test_training_learns_which_part_of_the_vectors_marks_the_answer_and_is_deterministic() -> None:
    rng = np.random.default_rng(7)
    n, candidates, dim = 300, 6, 16
    queries = rng.standard_normal((n, dim)).astype(np.float32)
    memories = rng.standard_normal((n, candidates, dim)).astype(np.float32)
    memories[:, 0, 3] = 3.0 * np.sign(queries[:, 3])  # the answer agrees with the query along one axis
    features = np.zeros((n, candidates, len(rerank.FEATURES)), dtype=np.float32)

    params = train_rerank.train(queries, memories, features)
    learned = rerank.Reranker(params["w"], params["d"], params["u"], params["v"], {})
    scores = np.stack([learned.scores(q, m, f) for q, m, f in zip(queries, memories, features, strict=True)])
    assert train_rerank.top1(scores) > 0.9
    again = train_rerank.train(queries, memories, features)
    assert all(np.array_equal(params[k], again[k]) for k in params)  # deterministic


@pytest.fixture
def reranking_on() -> Iterator[None]:
    before = rerank.ENABLED
    rerank.ENABLED = True
    try:
        yield
    finally:
        rerank.ENABLED = before


@pytest.fixture
async def local(engine: MemoryEngine) -> AsyncIterator[MemoryEngine]:
    embedder = CachedEmbedder(LocalEmbedder(), engine.store.vectors)
    engine.embedder = embedder
    engine.embedding.query_timeout = GENEROUS_TIMEOUT
    try:
        yield engine
    finally:
        engine.embedder = None
        await embedder.close()


@pytest.mark.both_stores
async def test_hybrid_retrieval_through_a_store_re_ranks_the_same_hits(
    local: MemoryEngine, reranking_on: None
) -> None:
    facts = [
        "I work as a nurse at the city hospital",
        "I live in Leeds with my partner",
        "My dog is called Biscuit",
        "I'm allergic to peanuts",
        "我在上海的一家银行上班",
    ]
    results = await local.write_many("alice", [Fact(content=c) for c in facts])
    by_content = {c: r.id for c, r in zip(facts, results, strict=True)}

    for query in ("what do I do for a living?", "what's my dog's name?", "我做什么工作？"):
        on = await local.retrieve("alice", query, touch=False)
        rerank.ENABLED = False
        off = await local.retrieve("alice", query, touch=False)
        rerank.ENABLED = True
        assert {h.id for h in on} == {h.id for h in off}  # the same hits, perhaps in another order
        assert [h.score for h in on] == sorted((h.score for h in on), reverse=True)
        # the scores are handed out again (decay moves them a little between the two calls)
        assert sorted(h.score for h in on) == pytest.approx(sorted(h.score for h in off), rel=1e-6)
    hits = await local.retrieve("alice", "what's my dog's name?", touch=False)
    assert hits[0].id == by_content[facts[2]], [h.content for h in hits]


def test_without_a_query_vector_nothing_is_re_ranked(reranking_on: None) -> None:
    vectors = OwnerVectors.build([])
    assert _reranking(None, vectors) is None  # keyword-only retrieval: the ranking as it was
    assert _reranking(np.ones(DIM, dtype=np.float32), None) is None
    assert _reranking(np.ones(DIM, dtype=np.float32), vectors) is not None


def test_candidates_are_ordered_by_the_centred_vector_and_keep_the_query_s_own_cosine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = rerank.load()
    assert model is not None
    query = model.centres[1] / np.linalg.norm(model.centres[1])  # a "question" along the Chinese centre
    monkeypatch.setattr(retriever, "CENTRED_CANDIDATES", False)
    assert retriever._ranking_vector(query) is None  # the query itself
    monkeypatch.setattr(retriever, "CENTRED_CANDIDATES", True)
    moved = retriever._ranking_vector(query)
    expected = query - model.centre_weight * model.centres[1]  # the nearest centre is taken off
    assert np.allclose(moved, expected, atol=1e-6)


@pytest.mark.both_stores
async def test_with_centred_candidates_a_hit_s_cosine_is_still_the_query_s(
    local: MemoryEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(retriever, "CENTRED_CANDIDATES", True)
    facts = ["I work as a nurse at the city hospital", "My dog is called Biscuit", "我在上海的一家银行上班"]
    await local.write_many("bob", [Fact(content=c) for c in facts])
    hits = await local.retrieve("bob", "what's my dog's name?", touch=False)
    assert hits and hits[0].content == facts[1]
    query = await local.embedding.query("what's my dog's name?")
    assert query is not None
    vectors = await local.vectors.cache.get("bob", local.embedder.model_key)  # type: ignore[union-attr]
    own = vectors.similarities(query, [h.id for h in hits])
    assert all(h.cosine == pytest.approx(own[h.id], abs=1e-5) for h in hits if h.cosine)
