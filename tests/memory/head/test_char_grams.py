"""Round 21's character n-gram score (``memory/head/char_grams.py``): spacing and punctuation are not
features, it learns a split from the characters, an out-of-fold score never saw its own row, and a head
file with ``grams_<lang>`` and ``combined_grams`` weighs it in that language's combined score (the shipped
head does for Chinese since 2026.12-22g, ``test_the_shipped_head_weighs_the_grams_in_chinese_only``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from memory.head.char_grams import fit, grams, oof_scores, scores
from memory.head.grams_training import GRAMS_BITS
from memory.head.model import load_head, read_head
from memory.head.outputs import read_arrays, save_head
from tests.support.random_heads import random_head


def test_spaces_and_punctuation_are_not_features() -> None:
    assert np.array_equal(grams("我 家 猫 三 岁 了 。"), grams("我家猫三岁了"))
    assert np.array_equal(grams("哈哈，好的！"), grams("哈哈好的"))
    assert not np.array_equal(grams("我家猫三岁了"), grams("我家狗三岁了"))
    assert len(grams("")) == 0


def _rows() -> tuple[list[np.ndarray], np.ndarray]:
    facts = ["我舅舅住在成都", "老妈对花生过敏", "我家猫今年三岁", "我下个月搬去杭州", "同事老王是会计"]
    chat = ["你呢你呢", "是的是的哈哈", "哈哈你在干嘛", "真的假的呀", "你吃饭了吗"]
    texts = [t + tail for t in facts + chat for tail in ("", "啦", "呢", "哦")]
    y = np.array([1.0] * (4 * len(facts)) + [0.0] * (4 * len(chat)))
    return [grams(t, bits=12) for t in texts], y


def test_more_weight_decay_keeps_the_split_with_smaller_weights() -> None:
    """``l2`` (``train --grams-l2``, round 30) shrinks the weights; the split is still learned, and the
    default is round 21's."""
    rows, y = _rows()
    light, heavy = fit(rows, y, bits=12), fit(rows, y, bits=12, l2=1e-2)
    assert np.abs(heavy[:-1]).sum() < np.abs(light[:-1]).sum()
    s = scores(heavy, rows)
    assert s[y == 1].min() > s[y == 0].max()
    assert np.array_equal(fit(rows, y, bits=12, l2=1e-5), light)


def test_it_learns_the_split_from_the_characters() -> None:
    rows, y = _rows()
    w = fit(rows, y, bits=12)
    s = scores(w, rows)
    assert (s[y == 1] > 0).all() and (s[y == 0] < 0).all()
    unseen = scores(w, [grams("我表哥住在成都", bits=12), grams("哈哈你呢", bits=12)])
    assert unseen[0] > unseen[1]


def test_an_out_of_fold_score_never_saw_its_row() -> None:
    rows, y = _rows()
    folds = np.arange(len(rows)) % 4
    before = oof_scores(rows, y, folds, bits=12)
    flipped = y.copy()
    flipped[folds == 0] = 1 - flipped[folds == 0]  # fold 0's labels only
    after = oof_scores(rows, flipped, folds, bits=12)
    assert np.array_equal(before[folds == 0], after[folds == 0])
    assert not np.array_equal(before[folds != 0], after[folds != 0])


def test_the_combined_score_reads_the_grams_only_where_the_head_weighs_them(tmp_path: Path) -> None:
    path = tmp_path / "head.npz"
    random_head(path)
    rows_, y = _rows()
    weights = fit(rows_, y, bits=12)
    combined = {"thresholds": np.zeros((2, 4)), "combined": np.array([[0.0, 0.0, 0.0, 0.5]] * 2)}
    grams_rows = {"grams_zh": weights, "combined_grams": np.array([0.0, 1.0])}
    save_head(str(path), {**read_arrays(str(path)), **combined, **grams_rows})
    with np.load(path) as data:
        head = read_head(data)
        plain = read_head({k: data[k] for k in data.files if "grams" not in k})
    assert head.combined is not None and head.combined["zh"].h == 1.0 and head.combined["en"].h == 0.0
    vectors = np.random.default_rng(7).normal(size=(2, 16)).astype(np.float32)
    texts = ["我表哥住在成都", "哈哈你呢"]
    verdicts = [
        head.fact_verdicts(vectors[i : i + 1], [t], vectors[i : i + 1], t)[0] for i, t in enumerate(texts)
    ]
    assert verdicts == [True, False]  # the n-gram score alone decides where a, b, c are zero
    assert [
        plain.fact_verdicts(vectors[i : i + 1], [t], vectors[i : i + 1], t)[0] for i, t in enumerate(texts)
    ] == [
        False,
        False,
    ]


def test_the_shipped_head_weighs_the_grams_in_chinese_only() -> None:
    head = load_head()
    assert head.combined is not None and head.combined["zh"].h > 0 and head.combined["en"].h == 0.0
    assert set(head.grams_w) == {"zh"} and len(head.grams_w["zh"]) == (1 << GRAMS_BITS) + 1
    told, chat = grams("我舅舅下个月搬去杭州", GRAMS_BITS), grams("哈哈你在干嘛呢", GRAMS_BITS)
    assert scores(head.grams_w["zh"], [told])[0] > scores(head.grams_w["zh"], [chat])[0]
