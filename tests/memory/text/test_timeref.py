"""memory.text.timeref.find_window: each date form it reads (zh and en), its window, the text left."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memory.text.timeref import DAY_SLACK, MONTH_SLACK, TimeWindow, find_window

NOW = datetime(2024, 5, 15, 12, 0, tzinfo=UTC)


def day(y: int, m: int, d: int) -> TimeWindow:
    return TimeWindow(date(y, m, d) - DAY_SLACK, date(y, m, d) + DAY_SLACK)


def month(y: int, m: int, last: int) -> TimeWindow:
    return TimeWindow(date(y, m, 1) - MONTH_SLACK, date(y, m, last) + MONTH_SLACK)


@pytest.mark.parametrize(
    ("text", "window", "left"),
    [
        ("what happened on 2023-06-03?", day(2023, 6, 3), "what happened on  ?"),
        ("what did I do on 3 June, 2023", day(2023, 6, 3), "what did I do on  "),
        ("on the 3rd of June 2023 we met", day(2023, 6, 3), "on the   we met"),
        ("we met on 3rd of June 2023", day(2023, 6, 3), "we met on  "),
        ("what did we decide on June 3, 2023?", day(2023, 6, 3), "what did we decide on  ?"),
        ("what about Jun. 3rd 2023", day(2023, 6, 3), "what about  "),
        ("what did I plan in March 2023", month(2023, 3, 31), "what did I plan in  "),
        ("what did I plan in Feb, 2024", month(2024, 2, 29), "what did I plan in  "),
        ("2023年6月3日我们去了哪里", day(2023, 6, 3), " 我们去了哪里"),
        ("2023年6月3号", day(2023, 6, 3), " "),
        ("2023年6月发生了什么", month(2023, 6, 30), " 发生了什么"),
        (
            "6月3日那天",
            day(2024, 6, 3).__class__(date(2023, 6, 3) - DAY_SLACK, date(2023, 6, 3) + DAY_SLACK),
            " 那天",
        ),
        ("5月1日那天", day(2024, 5, 1), " 那天"),
        ("what did I do in 2022?", TimeWindow(date(2022, 1, 1), date(2022, 12, 31)), "what did I do  ?"),
        ("2022年的计划", TimeWindow(date(2022, 1, 1), date(2022, 12, 31)), " 的计划"),
    ],
)
def test_absolute_dates(text: str, window: TimeWindow | None, left: str | None) -> None:
    found, rest = find_window(text, NOW)
    assert found == window
    assert rest == (left if window is not None else text)


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what did I tell you yesterday?", date(2024, 5, 14), date(2024, 5, 15)),
        ("昨天说了什么", date(2024, 5, 14), date(2024, 5, 15)),
        ("前天的会议", date(2024, 5, 13), date(2024, 5, 14)),
        ("what did I say today", date(2024, 5, 15), date(2024, 5, 15)),
        ("今天吃了什么", date(2024, 5, 15), date(2024, 5, 15)),
        ("what happened last week", date(2024, 5, 2), date(2024, 5, 15)),
        ("last weekend was fun", date(2024, 5, 2), date(2024, 5, 15)),
        ("上周我们聊了什么", date(2024, 5, 2), date(2024, 5, 15)),
        ("上个星期的事", date(2024, 5, 2), date(2024, 5, 15)),
        ("what did we decide last month", date(2024, 3, 14), date(2024, 5, 15)),
        ("上个月的计划", date(2024, 3, 14), date(2024, 5, 15)),
        ("where did I go last year", date(2022, 5, 16), date(2023, 11, 17)),
        ("去年去了哪里", date(2022, 5, 16), date(2023, 11, 17)),
        ("this week I started", date(2024, 5, 8), date(2024, 5, 15)),
        ("本月的目标", date(2024, 4, 14), date(2024, 5, 15)),
    ],
)
def test_relative_references(text: str, start: date, end: date) -> None:
    found, rest = find_window(text, NOW)
    assert found == TimeWindow(start, end)
    assert rest != text  # the time words are taken out of the query


def test_the_first_absolute_date_wins_over_a_relative_one() -> None:
    found, _ = find_window("yesterday I remembered 2023-06-03", NOW)
    assert found == day(2023, 6, 3)


@pytest.mark.parametrize(
    "text",
    [
        "what is my favourite colour?",
        "I have 2 cats and 3 dogs",
        "call me at 13:45",
        "version 3.12 is out",
        "我有3只猫",
        "in 1800 people walked",  # a year outside 1900–2200 is not a window
        "on 2023-02-31 nothing happened",  # no such day
        "13月5日",  # no such month
    ],
)
def test_what_is_not_a_date(text: str) -> None:
    assert find_window(text, NOW) == (None, text)


def test_a_day_later_in_the_year_than_today_means_last_year() -> None:
    found, _ = find_window("12月25日", NOW)
    assert found == day(2023, 12, 25)
