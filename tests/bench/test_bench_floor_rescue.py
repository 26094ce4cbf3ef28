"""bench.floor_rescue: the rescue's cut is chosen on the training outcome as its docstring says."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bench.floor_other import main as other_main
from bench.floor_rescue import CROWDS, Line, outcome, sweep
from bench.floor_rescue import main as rescue_main
from memory.vectors.index import StandOut


def _stand(memory_id: int, lift: float, gap: float) -> StandOut:
    return StandOut(memory_id, 0.9, 0.9 - gap, 0.9 - lift)


def _lines() -> list[Line]:
    one_crowd = [
        # an English question the gate refused, its memory far out in front
        Line("", "en", "asks", 1, True, _stand(1, 0.12, 0.05)),
        # an English corpus line the gate refused, its nearest memory 0.05 out in front
        Line("", "en", "corpus", None, True, _stand(7, 0.05, 0.05)),
        # a Chinese line written near a memory: out in front by lift, level with the next memory
        Line("", "zh", "near", None, True, _stand(8, 0.065, 0.0)),
        # Chinese questions the gate let through: one far out in front, one just ahead of a rival
        Line("", "zh", "asks", 2, False, _stand(2, 0.2, 0.02)),
        Line("", "zh", "asks", 3, False, _stand(3, 0.05, 0.02)),
        # a Chinese question whose nearest memory is another one
        Line("", "zh", "asks", 4, True, _stand(5, 0.3, 0.1)),
        # a chit-chat line a rule refused (no rescue whatever its memory), and one with no vector
        Line("", "zh", "written", None, False, _stand(9, 0.3, 0.3)),
        Line("", "zh", "corpus", None, True, None),
    ]
    return [replace(line, crowd=crowd) for crowd in CROWDS for line in one_crowd]


def test_outcome_counts_own_other_and_shown_per_source() -> None:
    result = outcome(_lines(), 0.05, 0.0)
    for crowd in CROWDS:
        en, zh = result[crowd]["en"], result[crowd]["zh"]
        assert (en["asks"], en["own"], en["refused_own"], en["other"]) == (1, 1, 1, 0)
        assert (en["corpus"], en["corpus_shown"]) == (1, 1)
        assert (zh["asks"], zh["own"], zh["refused_own"], zh["other"]) == (3, 2, 0, 1)
        assert (zh["near"], zh["near_shown"], zh["written"], zh["written_shown"]) == (1, 1, 1, 0)
        assert (zh["corpus"], zh["corpus_shown"]) == (1, 0)
    assert outcome(_lines(), 0.06, 0.0)["person"]["en"]["corpus_shown"] == 0
    assert outcome(_lines(), 0.05, 0.01)["pooled"]["zh"]["near_shown"] == 0


def test_chosen_is_each_languages_least_lift_within_the_share_at_the_gap_that_admits_most() -> None:
    """At gap 0 the near line needs lift 0.07, which loses the question 0.05 ahead; at gap 0.01 the near
    line is never shown, so lift 0.04 is within the share and admits both Chinese questions."""
    result = sweep(_lines())
    assert result["chosen"] == {"gap": 0.01, "en": 0.06, "zh": 0.04}
    assert result["cuts"]["0.07/0.0"]["person"]["zh"]["own"] == 1


def test_missing_data_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for main in (rescue_main, other_main):
        assert main(["--data", str(tmp_path / "nowhere"), "--embedding", "local"]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("missing input:") and "\n" not in err
