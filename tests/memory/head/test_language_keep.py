"""A language's own keep network (round 29, ``keep_<lang>_*``, ``language_keep.own_keeps``): it scores that
language's clauses, the shared keep network the others'; the composed head takes the other language's keep
network and rows from the base."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from memory.head.language_keep import main, own_keeps
from memory.head.model import HEAD_FILE, PARTS, read_head
from memory.head.outputs import read_arrays, save_head

EN, ZH = "I moved to Leeds last spring", "我去年春天搬到了成都"


def _shipped() -> dict[str, np.ndarray]:
    return read_arrays(str(resources.files("memory.head").joinpath(HEAD_FILE)))


def _plain() -> dict[str, np.ndarray]:
    """The shipped head with one shared keep network: its own keep networks taken out."""
    return {k: v for k, v in _shipped().items() if not k.startswith(("keep_en_", "keep_zh_"))}


def _vectors(count: int, seed: int = 5) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((count, 384)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _heads(tmp_path: Path) -> tuple[Path, Path]:
    """A base head and a "new" one trained from its networks: keep leaning to keeping, new keep rows."""
    base, new = tmp_path / "base.npz", tmp_path / "new.npz"
    plain = _plain()
    save_head(str(base), plain)
    moved = dict(plain)
    moved["keep_b2"] = plain["keep_b2"] + np.array([-30.0, 30.0], dtype=np.float32)  # keeps everything
    moved["thresholds"] = plain["thresholds"] + np.array([0.5, 0.0, 0.0, 0.25], dtype=np.float32)
    moved["combined"] = plain["combined"] + 0.125
    save_head(str(new), moved)
    return base, new


def test_a_language_keep_network_scores_only_its_language(tmp_path: Path) -> None:
    base, new = _heads(tmp_path)
    out = tmp_path / "out.npz"
    report = own_keeps(str(base), str(new), ["zh"], str(out), version="test-29")
    assert report["languages"] == ["zh"]
    before, written = read_head(read_arrays(str(base))), read_arrays(str(out))
    after = read_head(written)
    assert written["keep_w1"].dtype == np.float16 and written["keep_zh_w1"].dtype == np.float16
    assert after.version == "test-29" and set(after.keep_by_language) == {"zh"}
    passages = _vectors(20)
    zh = after.keep_scores(passages, ["zh"] * 20)
    en = after.keep_scores(passages, ["en"] * 20)
    assert (zh - before.keep_scores(passages) >= 60 - 0.1).all()  # the new network: +30 − (−30)
    assert np.allclose(en, before.keep_scores(passages), atol=0.05)  # the base's (float16 first layer)
    mixed = after.keep_scores(passages, ["zh", "en"] * 10)
    assert np.allclose(mixed[0::2], zh[0::2], atol=1e-4) and np.allclose(mixed[1::2], en[1::2], atol=1e-4)
    assert after.thresholds["en"] == before.thresholds["en"]
    assert after.thresholds["zh"].keep == pytest.approx(before.thresholds["zh"].keep + 0.5)
    assert after.thresholds["zh"].gate == before.thresholds["zh"].gate
    assert after.combined is not None and before.combined is not None
    assert after.combined["en"] == before.combined["en"]
    assert after.combined["zh"].a == pytest.approx(before.combined["zh"].a + 0.125)
    assert out.stat().st_size <= 2_000_000


def test_the_verdicts_read_each_clause_by_its_own_language(tmp_path: Path) -> None:
    base, new = _heads(tmp_path)
    out = tmp_path / "out.npz"
    own_keeps(str(base), str(new), ["zh"], str(out))
    head = read_head(read_arrays(str(out)))
    passages = _vectors(2, seed=9)
    assert head.keeps(passages, [ZH, EN])[0]  # the Chinese keep network keeps everything
    shared = head.keep_scores(passages[1:])
    assert head.keep_scores(passages, [ZH, EN])[1] == pytest.approx(shared[0])


def test_a_lazy_read_gives_an_eager_reads_answers(tmp_path: Path) -> None:
    base, new = _heads(tmp_path)
    out = tmp_path / "out.npz"
    own_keeps(str(base), str(new), ["zh"], str(out))

    def reopen() -> np.lib.npyio.NpzFile:
        return np.load(out)

    eager = read_head(read_arrays(str(out)))
    with np.load(out) as data:
        lazy = read_head(data, reopen=reopen)
    assert "zh" in lazy.keep_by_language and lazy.keep_by_language.loaded == frozenset()  # type: ignore[attr-defined]
    passages = _vectors(10, seed=2)
    assert np.array_equal(lazy.keep_scores(passages, ["zh"] * 10), eager.keep_scores(passages, ["zh"] * 10))


def test_heads_with_different_gates_or_an_owned_language_are_refused(tmp_path: Path) -> None:
    base, new = _heads(tmp_path)
    arrays = read_arrays(str(new))
    other = tmp_path / "other.npz"
    save_head(str(other), {**arrays, "gate_b2": arrays["gate_b2"] + 1.0})
    with pytest.raises(ValueError, match="gate"):
        own_keeps(str(base), str(other), ["zh"], str(tmp_path / "out.npz"))
    shifted = tmp_path / "shifted.npz"
    save_head(str(shifted), {**arrays, "thresholds": arrays["thresholds"] + 1.0})  # the gate column too
    with pytest.raises(ValueError, match="gate"):
        own_keeps(str(base), str(shifted), ["zh"], str(tmp_path / "out.npz"))
    owned = tmp_path / "owned.npz"
    plain = read_arrays(str(base))
    save_head(str(owned), {**plain, **{f"keep_zh_{p}": plain[f"keep_{p}"] for p in PARTS}})
    with pytest.raises(ValueError, match="already"):
        own_keeps(str(owned), str(new), ["zh"], str(tmp_path / "out.npz"))
    with pytest.raises(ValueError, match="languages"):
        own_keeps(str(base), str(new), ["fr"], str(tmp_path / "out.npz"))


def test_the_command_line_says_what_is_wrong_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = _heads(tmp_path)
    with pytest.raises(SystemExit, match=r"language_keep: .*missing\.npz"):
        main([str(base), str(tmp_path / "missing.npz"), "--languages", "zh", "--out", str(tmp_path / "o")])
    assert main([str(base), str(new), "--languages", "zh", "--out", str(tmp_path / "o.npz")]) == 0
    assert '"languages": ["zh"]' in capsys.readouterr().out


def test_the_shipped_head_keeps_both_languages_by_one_network() -> None:
    """2026.12-31t (DATA_CARD "Round 31"): one keep network trained on both languages' rows, the chit-chat
    lines judged facts among them, judges both again — 29k's ``keep_zh_*`` is gone; a head with one still
    reads it (the tests above)."""
    arrays = _shipped()
    head = read_head(arrays)
    assert head.keep_by_language == {}
    assert not any(k.startswith(("keep_zh_", "keep_en_")) for k in arrays)
    assert head.keep_for("zh") is head.keep_for("en") is head.keep_w
