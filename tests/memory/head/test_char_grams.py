"""Round 21's character n-gram score (``memory/head/char_grams.py``): spacing and punctuation are not
features, it learns a split from the characters, and an out-of-fold score never saw its own row."""

from __future__ import annotations

import numpy as np

from memory.head.char_grams import fit, grams, oof_scores, scores


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
