"""Round 19's Chinese gate rows (memory/head/zh_told.py): statements without 我 and facts said in passing as
"tell", requests, complaints and public dates as "other", own questions as "own" — gate rows only, never an
evaluation item nor near one, the same every run, off unless asked for."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from memory.head import zh_told
from memory.head.arguments import arguments
from memory.head.calibrate import trusted
from memory.head.corpus import Example, chitchat_split
from memory.head.train import evaluation_texts
from memory.head.zh_told import screened, zh_rows, zh_told_examples

REPO = Path(__file__).resolve().parents[3]
DATA = REPO / ".." / "shared" / "data"


def test_rows_are_chinese_gate_rows_of_three_labels() -> None:
    rows = zh_rows()
    assert [(e.text, e.asks) for e in rows] == [(e.text, e.asks) for e in zh_rows()]  # deterministic
    assert [e.text for e in zh_rows(seed=7)] != [e.text for e in rows]
    assert all(e.lang == "zh" and e.keep is None and e.category is None for e in rows)
    assert all(e.source.startswith("gate-zh-") for e in rows)
    assert not trusted(rows).any()  # thresholds stay chosen on the rows a person labelled
    labels = Counter(e.asks for e in rows)
    assert labels["tell"] >= 400 and labels["other"] >= 150 and labels["own"] >= 100
    assert not [e.text for e in rows if "{" in e.text or "}" in e.text]  # every slot filled
    assert len({e.text for e in rows}) == len(rows)


def test_the_dated_statements_hold_no_first_person_and_the_passing_ones_ask_for_something() -> None:
    rows = zh_rows()
    dated = [e.text for e in rows if e.source == "gate-zh-tell-dated"]
    assert len(dated) >= 200 and not [t for t in dated if "我" in t]
    passing = [e.text for e in rows if e.source == "gate-zh-tell-passing"]
    asked = [t for t in passing if re.search(r"帮我|给我|推荐|咋个办|想想", t)]
    vented = [t for t in passing if re.search(r"死了|烦|无语|头大|崩溃|心累|服了|恼火|焦虑", t)]
    assert len(asked) >= 40 and len(vented) >= 20


def test_casual_registers_and_kinds_are_covered() -> None:
    texts = [e.text for e in zh_rows() if e.asks == "tell"]
    said = {
        "语气词": r"[哈啦呢嘛哦]$",
        "lead": r"^(?:对了|话说|害|诶|跟你说|提一句)",
        "birthday": r"生日|大寿",
        "appointment": r"复查|复诊|拔牙|体检|疫苗|产检",
        "bill": r"房租|物业费|房贷|车贷|学费",
        "shift": r"值班|夜班|早班|出差",
        "trip": r"航班|高铁|动车|飞机",
        "class": r"课|训练|跆拳道",
        "pet": r"团子|可乐|橘子|旺财|豆包|年糕|芝麻|小黑|大黄|毛毛|布丁|元宝",
        "health": r"过敏|高血压|糖尿病|哮喘|吃.{0,4}药|胰岛素",
        "document": r"护照|身份证|驾照|签证|通行证",
        "weekly": r"每(?:周|星期|个|隔)",
        "lunar": r"农历",
    }
    for what, pattern in said.items():
        assert len([t for t in texts if re.search(pattern, t)]) >= 8, what
    other = [e.text for e in zh_rows() if e.asks == "other"]
    assert len([t for t in other if re.search(r"春节|国庆|中秋|端午|清明|元旦|五一", t)]) >= 10
    assert not [t for t in other if t.endswith(("记一下", "别忘了", "记住哈"))]  # "keep this" only on a tell


def test_no_row_is_an_evaluation_text() -> None:
    if not (DATA / "locomo" / "locomo10.json").exists():
        pytest.skip("shared data not present")
    banned = evaluation_texts(DATA, REPO)
    rows = zh_told_examples(banned | set(chitchat_split(DATA, "lccc", held_out=True)), on=True)
    assert len(rows) >= 600
    assert not [e.text for e in rows if e.text.strip() in banned]


def test_the_screen_drops_rows_near_a_screened_text() -> None:
    texts = ("老妈下周三去医院复查。", "团子是只橘猫哈")
    rows = [Example(t, "zh", "gate-zh-x", None, None, "tell") for t in texts]
    kept, dropped = screened(rows, ["老妈下周三去医院复查！", "完全不相干的一句话", "hello there"])
    assert dropped == ["老妈下周三去医院复查。"] and [e.text for e in kept] == ["团子是只橘猫哈"]
    assert screened(rows, [])[0] == rows


def test_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(zh_told, "ON", False)
    assert zh_told_examples() == []
    assert zh_told_examples(on=True)
    defaults: dict[str, object] = {"seed": 1, "l2": 0, "hidden": 1, "iterations": 1, "tell_false_rate": 0.03}
    assert arguments(["--zh-told"], "", defaults).zh_told and not arguments([], "", defaults).zh_told
