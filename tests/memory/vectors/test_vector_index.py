"""OwnerVectors: exact cosine top-k over one owner's vectors, tiers, appends, stale blobs."""

from __future__ import annotations

import numpy as np

from memory.vectors.index import OwnerVectors, blob_to_vector, vector_to_blob


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def build(rows: list[tuple[int, int, np.ndarray]]) -> OwnerVectors:
    return OwnerVectors.build([(i, t, vector_to_blob(v)) for i, t, v in rows])


def test_top_orders_by_cosine_and_filters_tiers() -> None:
    vectors = build(
        [(1, 2, unit(1, 0, 0)), (2, 2, unit(1, 1, 0)), (3, 1, unit(1, 0.1, 0)), (4, 2, unit(0, 0, 1))]
    )
    query = unit(1, 0, 0)
    assert [i for i, _ in vectors.top(query, 3)] == [1, 2, 4]  # tier 2 only; 3 is tier 1
    assert [i for i, _ in vectors.top(query, 2, (1, 2))] == [1, 3]
    assert vectors.top(unit(1, 0), 3) == []  # another width: nothing, not an error


def test_append_is_searchable_and_ignores_other_widths() -> None:
    vectors = build([(1, 2, unit(1, 0, 0))])
    vectors.append(2, 2, unit(0, 1, 0))
    vectors.append(3, 2, unit(0, 1))  # another model's width: ignored
    assert len(vectors) == 2
    assert vectors.top(unit(0, 1, 0), 1) == [(2, 1.0)]
    assert vectors.ids.tolist() == [1, 2]
    assert vectors.similarities(unit(1, 0, 0), [2, 1, 9]) == {2: 0.0, 1: 1.0}


def test_empty_matrix_takes_appends() -> None:
    vectors = OwnerVectors.build([])
    vectors.append(7, 2, unit(0, 0, 1))
    assert vectors.top(unit(0, 0, 1), 5) == [(7, 1.0)]


def test_stale_or_corrupt_blobs_are_left_out() -> None:
    vectors = OwnerVectors.build(
        [(1, 2, vector_to_blob(unit(1, 0, 0))), (2, 2, b"\x00\x01"), (3, 2, vector_to_blob(unit(1, 0)))]
    )
    assert vectors.ids.tolist() == [1]
    assert blob_to_vector(b"abc") is None
    assert blob_to_vector(vector_to_blob(unit(1, 0, 0)), dim=4) is None


def test_stand_out_names_the_nearest_of_the_tier_and_its_distances() -> None:
    vectors = build(
        [
            (1, 2, unit(1, 0.2, 0)),
            (2, 2, unit(0, 1, 0)),
            (3, 1, unit(1, 0, 0)),  # nearer, but tier 1
            (4, 2, unit(0.5, 1, 0)),
            (5, 2, unit(0, 0, 1)),
        ]
    )
    query = unit(1, 0, 0)
    stand = vectors.stand_out(query)
    assert stand is not None and stand.memory_id == 1
    cosines = sorted(float(unit(*v) @ query) for v in ((1, 0.2, 0), (0, 1, 0), (0.5, 1, 0), (0, 0, 1)))
    assert abs(stand.cosine - cosines[-1]) < 1e-6
    assert abs(stand.second - cosines[-2]) < 1e-6
    assert abs(stand.median - float(np.median(cosines))) < 1e-6
    assert stand.gap == stand.cosine - stand.second > 0
    assert stand.lift == stand.cosine - stand.median > 0


def test_stand_out_needs_two_memories_of_the_tier_and_the_same_width() -> None:
    assert build([(1, 2, unit(1, 0))]).stand_out(unit(1, 0)) is None
    assert build([(1, 2, unit(1, 0)), (2, 1, unit(0, 1))]).stand_out(unit(1, 0)) is None
    assert build([(1, 2, unit(1, 0)), (2, 2, unit(0, 1))]).stand_out(unit(1, 0, 0)) is None
    tie = build([(1, 2, unit(1, 0)), (2, 2, unit(1, 0))]).stand_out(unit(1, 0))
    assert tie is not None and tie.gap == 0.0 and tie.lift == 0.0
