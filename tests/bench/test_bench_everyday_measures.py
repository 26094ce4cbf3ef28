"""bench/everyday_measures.py's judged shares (issue 35, round 31): over the corpus lines a reader judged."""

from __future__ import annotations

from bench.everyday_measures import judged_lines


def test_judged_shares_count_unsure_against_the_keeper() -> None:
    kept = [True, True, False, True, False, False]
    labels = ["fact", "unsure", "fact", "no", None, "no"]
    got = judged_lines(kept, labels)
    assert got == {"judged": 5, "labelled_facts": 2 / 5, "kept_without_fact": 2 / 5, "facts_kept": 1 / 2}
    assert judged_lines([True], [None]) == {
        "judged": 0,
        "labelled_facts": None,
        "kept_without_fact": None,
        "facts_kept": None,
    }
