"""bench.floor_other: the other share is chosen on the training outcome as its docstring says."""

from __future__ import annotations

from bench.floor_other import LIFTS, Line, cosine_sweep, lift_sweep, outcome, sweep
from memory.records import Retrieved
from memory.retrieval.ranking import RelevanceFloor


def _hit(memory_id: int, match: float, cosine: float) -> Retrieved:
    return Retrieved(
        memory_id, "x", 2, "_global", "_general", "event", 0.5, "2026-01-01 00:00:00", 1.0, match, cosine
    )


def _lines() -> list[Line]:
    return [
        # a question about one's own life: the lift admits its memory whatever the other share
        Line("en", "what's my dog called?", 1, True, [_hit(1, 0.0, 0.83)], 0.80),
        # another message that needs its memory, which shares 0.3 of its words
        Line("en", "tell me about the Leeds trip", 2, False, [_hit(2, 0.3, 0.80)], 0.79),
        # chit-chat sharing one word (0.2) with a memory
        Line("en", "what time is it in Tokyo?", None, False, [_hit(3, 0.2, 0.80)], 0.79),
        Line("zh", "东京现在几点？", None, None, [_hit(4, 0.9, 0.95)], 0.85),  # the gate refused it
    ]


def test_a_higher_other_share_drops_the_chat_line_then_the_needed_memory() -> None:
    floor = RelevanceFloor(hybrid_match=0.15, hybrid_cosine=0.84, hybrid_cosine_zh=0.865, hybrid_lift=0.02)
    low = outcome(_lines(), floor)
    assert low["en"] == {"asks": 2, "recalled": 2, "chat": 1, "shown": 1}
    assert low["zh"] == {"asks": 0, "recalled": 0, "chat": 1, "shown": 0}
    mid = outcome(_lines(), RelevanceFloor(0.0, 0.15, 0.84, 0.0, 0.865, 0.02, other_match=0.25))
    assert mid["en"]["recalled"] == 2 and mid["en"]["shown"] == 0
    high = outcome(_lines(), RelevanceFloor(0.0, 0.15, 0.84, 0.0, 0.865, 0.02, other_match=0.35))
    assert high["en"]["recalled"] == 1


def test_chosen_is_the_largest_share_that_loses_no_training_ask() -> None:
    result = sweep(_lines())
    assert result["chosen"] == 0.3
    assert set(result["lifts"]) == {str(x) for x in LIFTS} and set(result["chosen_lift"]) == {"en", "zh"}


def test_the_cosine_cut_is_chosen_per_language_on_the_training_asks() -> None:
    """Round 25: of the cuts of ``COSINES`` that lose no training question of the language, the least
    that shows the fewest chit-chat lines."""
    lines = [
        *_lines(),
        # chit-chat close in meaning to a memory, no shared word: only the cosine admits it
        Line("en", "is this shampoo any good?", None, False, [_hit(5, 0.0, 0.87)], 0.80),
        # an other message that needs its memory at cosine 0.905
        Line("en", "the Leeds thing again", 6, False, [_hit(6, 0.0, 0.905)], 0.80),
        Line("zh", "洗发水好用吗", None, False, [_hit(7, 0.0, 0.93)], 0.85),
    ]
    floor = RelevanceFloor(0.0, 0.15, 0.84, 0.0, 0.865, 0.02, other_match=0.25)
    result = cosine_sweep(lines, floor)
    assert result["chosen_cosine"] == {"en": 0.88, "zh": 0.94}  # 0.91 would lose the Leeds memory
    assert result["cosines"]["0.87"]["en"]["shown"] == 1 and result["cosines"]["0.88"]["en"]["shown"] == 0
    assert result["cosines"]["0.91"]["en"]["recalled"] == result["cosines"]["0.9"]["en"]["recalled"] - 1
    assert result["cosines"]["0.94"]["zh"]["shown"] == 0 and result["cosines"]["0.92"]["zh"]["shown"] == 1


def test_the_lift_is_the_largest_per_language_that_loses_no_training_ask() -> None:
    """Round 34: a memory for an other message must stand the lift above the candidates' median; an
    own-life question's floor is not touched; a language without training asks takes the largest."""

    def pool(hit: Retrieved, median: float) -> list[Retrieved]:
        """The hit among others at the median, none admitted: a pool whose median the lift is read from."""
        return [hit, *(_hit(100 + i, 0.0, median) for i in range(4))]

    lines = [
        # a question about one's own life: the lift is not asked of it
        Line("en", "what's my dog called?", 1, True, pool(_hit(1, 0.0, 0.83), 0.80), 0.80),
        # an other message whose memory stands 0.055 out, and chit-chat sharing a word, 0.01 out
        Line("en", "remind me of the Leeds hotel", 2, False, pool(_hit(2, 0.4, 0.845), 0.79), 0.79),
        Line("en", "can cats eat chicken?", None, False, pool(_hit(3, 0.5, 0.80), 0.79), 0.79),
        Line("zh", "猫能吃鸡肉吗", None, False, pool(_hit(4, 0.5, 0.90), 0.85), 0.85),
    ]
    result = lift_sweep(lines, RelevanceFloor(0.0, 0.15, 0.84, 0.0, 0.865, 0.02, other_match=0.25))
    assert result["chosen_lift"] == {"en": 0.05, "zh": 0.08}
    lifts = result["lifts"]
    assert lifts["0.01"]["en"]["shown"] == 1 and lifts["0.02"]["en"]["shown"] == 0
    assert lifts["0.05"]["en"]["recalled"] == 2 and lifts["0.06"]["en"]["recalled"] == 1
    assert lifts["0.04"]["zh"]["shown"] == 1 and lifts["0.06"]["zh"]["shown"] == 0
