"""The workspace files (AGENTS.md, SOUL.md) are read once and again only when they change; the reply-path
timing samples stay bounded."""

from __future__ import annotations

import os
from pathlib import Path

from gateway.assistant import TIMING_SAMPLES_KEPT, MemoryTiming
from gateway.prompt import WorkspaceFiles, read_workspace


def _write(path: Path, text: str, mtime_ns: int) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def test_unchanged_files_are_not_read_again(tmp_path: Path) -> None:
    _write(tmp_path / "AGENTS.md", "Be brief.", 1_000_000_000)
    files = WorkspaceFiles(tmp_path)
    assert files.parts() == ["Be brief."]
    assert files.parts() == ["Be brief."]
    assert files.reads == 1


def test_an_edit_is_seen_on_the_next_message(tmp_path: Path) -> None:
    _write(tmp_path / "AGENTS.md", "Be brief.", 1_000_000_000)
    files = WorkspaceFiles(tmp_path)
    assert files.parts() == ["Be brief."]
    _write(tmp_path / "AGENTS.md", "Be kind.!", 2_000_000_000)  # same size, newer: still a change
    assert files.parts() == ["Be kind.!"]
    _write(tmp_path / "SOUL.md", "Warm.", 3_000_000_000)  # a file that appears
    assert files.parts() == ["Be kind.!", "Warm."]
    assert files.reads == 3


def test_a_deleted_file_drops_out(tmp_path: Path) -> None:
    _write(tmp_path / "AGENTS.md", "Be brief.", 1_000_000_000)
    _write(tmp_path / "SOUL.md", "Warm.", 1_000_000_000)
    files = WorkspaceFiles(tmp_path)
    assert files.parts() == ["Be brief.", "Warm."]
    (tmp_path / "AGENTS.md").unlink()
    assert files.parts() == ["Warm."]


def test_the_reader_is_the_one_given(tmp_path: Path) -> None:
    seen: list[Path] = []

    def reader(workspace: Path) -> list[str]:
        seen.append(workspace)
        return read_workspace(workspace)

    files = WorkspaceFiles(tmp_path, reader)
    assert files.parts() == [] and files.parts() == []
    assert seen == [tmp_path]


def test_timing_samples_keep_only_the_newest() -> None:
    timing = MemoryTiming()
    for i in range(TIMING_SAMPLES_KEPT + 5):
        timing.samples_ms.append(float(i))
    assert len(timing.samples_ms) == TIMING_SAMPLES_KEPT
    assert timing.samples_ms[0] == 5.0 and timing.samples_ms[-1] == float(TIMING_SAMPLES_KEPT + 4)
