"""File memory, the fallback when memory.enabled is false: long-term file plus the last seven days."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

from memory.files.file_memory import FileMemory

TODAY = date(2024, 5, 10)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_context_has_long_term_and_last_seven_days(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path)
    d = tmp_path / "memory"
    _write(d / "MEMORY.md", "- User is called Alice\n")
    _write(d / f"{(TODAY - timedelta(days=7)).isoformat()}.md", "eight days ago: too old\n")
    _write(d / f"{(TODAY - timedelta(days=6)).isoformat()}.md", "six days ago: oldest kept\n")
    _write(d / f"{(TODAY - timedelta(days=2)).isoformat()}.md", "   \n")  # blank: left out
    _write(d / f"{TODAY.isoformat()}.md", "today: shipped the CLI\n")
    _write(d / "notes.md", "not a daily file\n")
    _write(d / "20240510.md", "compact date name is not a daily file\n")

    ctx = mem.context(TODAY)

    assert ctx.startswith("## Long-term memory")
    assert "User is called Alice" in ctx
    assert "too old" not in ctx and "not a daily file" not in ctx
    assert "## Recent notes" in ctx
    six_ago = f"### {(TODAY - timedelta(days=6)).isoformat()}"
    assert ctx.index("## Long-term memory") < ctx.index("## Recent notes") < ctx.index(six_ago)
    assert ctx.index("oldest kept") < ctx.index("shipped the CLI")
    assert f"### {(TODAY - timedelta(days=2)).isoformat()}" not in ctx
    days = [day for day, _ in mem.recent_days(TODAY)]
    assert days == [TODAY - timedelta(days=6), TODAY]


def test_context_is_empty_when_there_is_nothing(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path)
    assert mem.context(TODAY) == ""
    _write(tmp_path / "memory" / "MEMORY.md", "\n  \n")
    assert mem.context(TODAY) == ""
    assert mem.recent_days(TODAY) == []


def test_recent_notes_only_without_long_term(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path)
    mem.append_today("met Bob", today=TODAY)
    ctx = mem.context(TODAY)
    assert "## Long-term memory" not in ctx
    assert ctx.startswith("## Recent notes") and "met Bob" in ctx


def test_append_creates_directory_and_keeps_lines(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path / "ws")
    mem.append_today("first", today=TODAY)
    mem.append_today("second", today=TODAY)
    mem.append_long_term("- likes tea")
    mem.append_long_term("- lives in Berlin")
    assert (tmp_path / "ws" / "memory" / f"{TODAY.isoformat()}.md").is_file()
    assert mem.read_day(TODAY).splitlines() == ["first", "second"]
    assert mem.read_long_term().splitlines() == ["- likes tea", "- lives in Berlin"]
    assert mem.read_day(TODAY - timedelta(days=1)) == ""


def test_write_long_term_replaces_and_leaves_no_temp_file(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path)
    mem.write_long_term("old\n")
    mem.write_long_term("new\n")
    assert mem.read_long_term() == "new\n"
    assert sorted(p.name for p in (tmp_path / "memory").iterdir()) == ["MEMORY.md"]


def test_chinese_round_trip(tmp_path: Path) -> None:
    mem = FileMemory(tmp_path)
    mem.write_long_term("- 用户叫小明，住在北京\n")
    mem.append_today("今天讨论了 tierclaw 的记忆迁移", today=TODAY)
    assert mem.read_long_term() == "- 用户叫小明，住在北京\n"
    assert mem.read_day(TODAY).strip() == "今天讨论了 tierclaw 的记忆迁移"
    raw = (tmp_path / "memory" / "MEMORY.md").read_bytes()
    assert raw.decode("utf-8") == "- 用户叫小明，住在北京\n"
    ctx = mem.context(TODAY)
    assert "用户叫小明" in ctx and "记忆迁移" in ctx
