"""The combined cut chosen on held-out lines as the keeper reads them (issue 35, round 50: ``held_cut``)."""

from __future__ import annotations

import argparse
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from memory.head import held_cut
from memory.head.model import HEAD_FILE, LANGUAGES

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"

# Lines of the test's own: three state a fact about the speaker, the rest are chit-chat.
LINES = [
    "My sister lives in Cardiff with her two boys.",
    "I work nights at the bakery on Mill Road.",
    "I'm allergic to penicillin, it gives me a rash.",
    "Ha, that's so funny.",
    "What a lovely day it is today.",
    "Thanks, see you tomorrow then!",
    "Do you think it will rain later?",
    "I'm so tired right now.",
]


def shipped() -> dict[str, np.ndarray]:
    with np.load(str(resources.files("memory.head").joinpath(HEAD_FILE))) as data:
        return {k: data[k] for k in data.files}


async def test_the_smallest_shift_is_where_the_share_first_reaches_the_rate() -> None:
    margins = np.array([-1.0, -0.5, 0.2, 0.7, 1.5])  # a line is kept while its margin beats the shift

    async def share_at(shift: float) -> float:
        return float((margins > shift).mean())

    shift = await held_cut.smallest_shift(share_at, 0.4)
    assert 0.2 <= shift <= 0.2 + held_cut.TOLERANCE and await share_at(shift) <= 0.4
    assert await share_at(shift - 2 * held_cut.TOLERANCE) > 0.4
    assert await held_cut.smallest_shift(share_at, 0.0, span=1.0) == 1.0  # even the top keeps a line
    assert await held_cut.smallest_shift(share_at, 1.0, span=1.0) == -1.0


def test_a_shift_moves_only_that_languages_cut() -> None:
    arrays = shipped()
    moved = held_cut.shifted(arrays, "zh", 0.5)
    before = arrays["combined"].reshape(len(LANGUAGES), 4)
    after = moved["combined"].reshape(len(LANGUAGES), 4)
    zh = LANGUAGES.index("zh")
    assert after[zh, 3] == pytest.approx(before[zh, 3] + 0.5)
    after[zh, 3] = before[zh, 3]
    assert np.array_equal(after, before) and moved["keep_w1"] is arrays["keep_w1"]


def test_rates_are_per_language_and_between_zero_and_one() -> None:
    assert held_cut.parse_rates("en=0.04,zh=0.03") == {"en": 0.04, "zh": 0.03}
    for bad in ("fr=0.1", "en=1.5", "en=0", "en"):
        with pytest.raises(argparse.ArgumentTypeError):
            held_cut.parse_rates(bad)


async def test_the_keeper_keeps_the_rate_of_lines_at_the_chosen_cut() -> None:
    arrays, report = await held_cut.choose(shipped(), {"en": LINES}, {"en": 0.25}, None)
    en = report["en"]
    assert en["after"] == 0.25  # two of the eight lines: the cut sits just under the second-best line
    assert en["rate"] == 0.25 and en["lines"] == len(LINES)
    zh = LANGUAGES.index("zh")
    assert np.array_equal(arrays["combined"].reshape(-1, 4)[zh], shipped()["combined"].reshape(-1, 4)[zh])


@pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data")
def test_the_lines_come_after_those_the_bench_and_the_readers_read() -> None:
    from memory.head.corpus import chitchat_split

    lines = held_cut.held_lines(DATA, "en", lines=50)
    first = list(dict.fromkeys(chitchat_split(DATA, "dailydialog", held_out=True)))
    assert len(lines) == 50 and not set(lines) & set(first[: held_cut.SKIP])


def test_the_command_refuses_a_missing_head_a_head_without_a_cut_and_a_missing_data_folder(
    tmp_path: Path,
) -> None:
    out = ["--out", str(tmp_path / "o.npz"), "--rate", "en=0.1"]
    with pytest.raises(SystemExit):
        held_cut.main(["--head", str(tmp_path / "no.npz"), *out])
    head = str(resources.files("memory.head").joinpath(HEAD_FILE))
    with pytest.raises(SystemExit):
        held_cut.main(["--head", head, *out, "--data", str(tmp_path)])
    uncut = tmp_path / "uncut.npz"
    np.savez(uncut, **{k: v for k, v in shipped().items() if k != "combined"})
    with pytest.raises(SystemExit, match="2"):
        held_cut.main(["--head", str(uncut), *out, "--data", str(DATA)])
    assert not (tmp_path / "o.npz").exists()
