"""The learned "asks" (memory/head/asking.py, issue 35 round 12): stored beside the head's arrays without
touching them, trained on general data with the question marks removed and never on an evaluation set,
and used where the rule says no — a question without its mark still reaches the head's gate verdict."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from memory.engine import MemoryEngine
from memory.head.asking import NAME, VERSION, load_question, read_question
from memory.head.asking_training import clean_label, training_rows, unmarked
from memory.head.model import HEAD_FILE
from memory.head.train import evaluation_texts
from memory.head.verdict import message_asks
from memory.retrieval.gate import asks
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import LocalEmbedder

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


@pytest.fixture
async def embedder(engine: MemoryEngine):
    cached = CachedEmbedder(LocalEmbedder(), engine.store.vectors)
    yield cached
    await cached.close()


def test_the_head_file_holds_the_question_classifier_with_its_version_and_sources() -> None:
    question = load_question()
    assert question is not None and question.meta["version"] == VERSION
    assert set(question.thresholds) == {"en", "zh"}
    assert {"dailydialog-train", "lccc-train", "written-zh", "written-en"} <= set(question.meta["sources"])
    path = resources.files("memory.head").joinpath(HEAD_FILE)
    with path.open("rb") as handle, np.load(handle) as data:
        again = read_question(data)
        assert {k for k in data.files if k.startswith(f"{NAME}_")} == {
            f"{NAME}_{p}" for p in ("mean", "scale", "w1", "b1", "w2", "b2", "thresholds", "meta")
        }
    vectors = np.random.default_rng(0).normal(size=(4, 384)).astype(np.float32)
    assert again is not None
    assert [question.score(v) for v in vectors] == [again.score(v) for v in vectors]


def test_a_head_file_without_it_has_no_learned_asks() -> None:
    assert read_question({"keep_w1": np.zeros(1)}) is None


def test_training_texts_carry_no_question_mark_and_no_closing_punctuation() -> None:
    assert unmarked("where does she work?") == "where does she work"
    assert unmarked("你家狗叫什么？？") == "你家狗叫什么"
    assert unmarked("I live in Lyon.") == "I live in Lyon"


def test_a_line_labelled_by_its_mark_is_left_out_when_it_asks_without_one() -> None:
    # LCCC's lines and the persona turns are labelled by their mark (round 39: the persona turns too).
    assert clean_label("你吃了吗？") and clean_label("我在长沙上班") and clean_label("I work in Leeds")
    assert not clean_label("你吃了吗") and not clean_label("where do you work")
    # The rule reads the line as the classifier is trained on it, without its closing punctuation.
    assert not any(clean_label(line) for line in ("你吃了吗！", "车险续了没。", "今朝落雨伐…"))


@pytest.mark.skipif(not DATA.is_dir(), reason="the shared data folder is not here")
def test_no_training_text_is_an_evaluation_item() -> None:
    banned = evaluation_texts(DATA, Path(__file__).resolve().parents[3])
    texts, labels, langs, sources, _ = training_rows(DATA, banned)
    # trained on without their marks, so compared without them too ("morning!" is "morning")
    assert not set(texts) & ({unmarked(b) for b in banned} | banned)
    assert not any("?" in t or "？" in t for t in texts)
    assert set(labels.tolist()) == {0, 1} and set(langs.tolist()) == {"en", "zh"}
    assert sum(sources.values()) == len(texts)


async def test_questions_without_their_mark_ask_and_statements_do_not(embedder: CachedEmbedder) -> None:
    # Written for this test (not training frames, not an evaluation set's items): the rule misses each.
    # (The rule reads 咩 since stop 71: "…做咩工" gave way to "…做边行", 边 before a noun.)
    questions = ["我表姐嘅老公做边行"]
    statements = ["我侄子在长沙读书", "my uncle lives in Leeds", "我表姐嘅老公做厨师"]
    assert not any(asks(t) for t in questions + statements)
    q_vectors = await embedder.embed_queries(questions)
    s_vectors = await embedder.embed_queries(statements)
    assert all(message_asks(v, t) for v, t in zip(q_vectors, questions, strict=True))
    assert not any(message_asks(v, t) for v, t in zip(s_vectors, statements, strict=True))


# Misses of the classifier (32q scores "…叫么子" -1.3, the mid-sentence ones -7.6 and -6.6, against 0.06;
# DATA_CARD "Round 32"): regional question words are in the rule since stop 70 (``gate.asks``), so they ask.
@pytest.mark.parametrize("text", ["我姑妈屋里的狗叫么子", "我侄子在么子学校读书", "我外甥女读么子专业"])
async def test_a_regional_question_word_asks(embedder: CachedEmbedder, text: str) -> None:
    (vector,) = await embedder.embed_queries([text])
    assert message_asks(vector, text)
