"""Reading reminder requests (gateway/reminders/parsing.py) by the rules in README "Reminders": kinds of
phrase in both languages, the text kept, DST edges and the bad inputs of issue 36. The phrasings here are
not bench/data/reminder_phrasings.json's (that set measures the parser; these pin its rules)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from gateway.reminders.parsing import is_request, parse_request, parse_when
from gateway.reminders.when import Due, Problem

WED = datetime(2026, 12, 9, 10, 20)  # a Wednesday morning
SHANGHAI = ZoneInfo("Asia/Shanghai")
LONDON = ZoneInfo("Europe/London")


def due(said: str, now: datetime = WED, zone: ZoneInfo = LONDON) -> tuple[str, str, str]:
    request = parse_request(said, now, zone)
    if isinstance(request.due, Problem):
        return f"error:{request.due.kind}", "", request.text
    repeat = str(request.due.repeat) if request.due.repeat else ""
    return request.due.shown.strftime("%Y-%m-%d %H:%M"), repeat, request.text


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("remind me to book the hotel in 40 minutes", ("2026-12-09 11:00", "", "book the hotel")),
        ("remind me in 2 hours and a half to check the dough", ("2026-12-09 12:50", "", "check the dough")),
        ("remind me in 6 days to return the jacket", ("2026-12-15 10:20", "", "return the jacket")),
        ("remind me on Friday at 2 to ring the builder", ("2026-12-11 14:00", "", "ring the builder")),
        ("remind me on Wednesday at 9 to water the orchids", ("2026-12-16 09:00", "", "water the orchids")),
        ("remind me at 11 to join the review", ("2026-12-09 11:00", "", "join the review")),
        ("remind me at 10 to join the review", ("2026-12-09 22:00", "", "join the review")),
        ("remind me on 2 January at 8am to book flights", ("2027-01-02 08:00", "", "book flights")),
        ("remind me on the 20th to pay the cleaner", ("2026-12-20 09:00", "", "pay the cleaner")),
        ("remind me tonight at 9:30 to call Aunt May", ("2026-12-09 21:30", "", "call Aunt May")),
        (
            "remind me every Thursday at 7pm to put the bins out",
            ("2026-12-10 19:00", "weekly:thu", "put the bins out"),
        ),
        (
            "remind me on the 3rd of every month to check the meter",
            ("2027-01-03 09:00", "monthly:3", "check the meter"),
        ),
        (
            "remind me every weekday at 8:45 to open the shop",
            ("2026-12-10 08:45", "weekdays", "open the shop"),
        ),
        ("remind me Saturday next week to clean the car", ("2026-12-19 09:00", "", "clean the car")),
        ("remind me yesterday to call Ed", ("error:past", "", "call Ed")),
        ("remind me on 29 February 2027 to renew", ("error:impossible", "", "renew")),
        ("remind me on the 1st to pay rent", ("error:ambiguous", "", "pay rent")),
        ("remind me to buy a present", ("error:no_time", "", "buy a present")),
    ],
)
def test_english(said: str, expected: tuple[str, str, str]) -> None:
    assert due(said) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("提醒我二十五分钟后看一下锅", ("2026-12-09 10:45", "", "看一下锅")),
        ("后天晚上七点半提醒我去看话剧", ("2026-12-11 19:30", "", "去看话剧")),
        ("下周四上午提醒我交体检表", ("2026-12-17 09:00", "", "交体检表")),
        ("周六下午两点提醒我去理发", ("2026-12-12 14:00", "", "去理发")),
        ("十二月二十五号提醒我寄贺卡", ("2026-12-25 09:00", "", "寄贺卡")),
        ("每周四晚上九点提醒我给奶奶打电话", ("2026-12-10 21:00", "weekly:thu", "给奶奶打电话")),
        ("每个月10号提醒我交物业费", ("2026-12-10 09:00", "monthly:10", "交物业费")),
        ("每天晚上十点半提醒我读书", ("2026-12-09 22:30", "daily", "读书")),
        ("每周日晚上八点提醒我安排下周的计划", ("2026-12-13 20:00", "weekly:sun", "安排下周的计划")),
        ("十一点提醒我取快递", ("2026-12-09 11:00", "", "取快递")),
        ("今天早上八点提醒我吃药", ("error:past", "", "吃药")),
        ("2月29日提醒我续会员", ("error:impossible", "", "续会员")),
        ("提醒我买牛奶", ("error:no_time", "", "买牛奶")),
    ],
)
def test_chinese(said: str, expected: tuple[str, str, str]) -> None:
    assert due(said, zone=SHANGHAI) == expected


def test_a_wall_time_the_zone_skips_moves_forward_and_a_repeat_keeps_its_clock_time() -> None:
    before_spring = datetime(2027, 3, 27, 12, 0)  # Europe/Berlin skips 02:00-03:00 on 28 March 2027
    berlin = ZoneInfo("Europe/Berlin")
    request = parse_request("remind me every day at 2:15am to read the meter", before_spring, berlin)
    assert isinstance(request.due, Due)
    assert request.due.local == datetime(2027, 3, 28, 2, 15)  # meant
    assert request.due.shown == datetime(2027, 3, 28, 3, 15)  # rings


def test_elapsed_time_across_the_autumn_change_counts_real_hours() -> None:
    night = datetime(2026, 10, 25, 0, 30)  # London goes back at 02:00 BST (01:00 UTC) on 25 October
    request = parse_request("remind me in 2 hours to check the boiler", night, LONDON)
    assert isinstance(request.due, Due)
    assert request.due.shown == datetime(2026, 10, 25, 1, 30)  # 00:30 BST + 2 h = 01:30 GMT


def test_questions_about_memory_are_not_requests() -> None:
    assert not is_request("remind me what I ordered last time")
    assert not is_request("提醒我一下我上次说的餐厅叫什么")
    assert not is_request("tell me a joke")
    assert not is_request("他们都叫我小王")
    assert is_request("remind me to call the bank")
    assert is_request("提醒我给房东打电话")
    assert is_request("tell me to stretch in 20 minutes")


def test_the_models_time_words_alone() -> None:
    assert parse_when("Friday 9am", WED, LONDON) == Due(
        datetime(2026, 12, 11, 9), datetime(2026, 12, 11, 9), None
    )
    assert parse_when("2026-12-24 18:30", WED, LONDON) == Due(
        datetime(2026, 12, 24, 18, 30), datetime(2026, 12, 24, 18, 30), None
    )
    assert parse_when("明天下午三点", WED, SHANGHAI) == Due(
        datetime(2026, 12, 10, 15), datetime(2026, 12, 10, 15), None
    )
    assert isinstance(parse_when("sometime", WED, LONDON), Problem)
