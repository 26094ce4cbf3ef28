"""The file-memory fallback: myclaw's original memory, used when config ``memory.enabled`` is false.

Everything lives in ``<workspace>/memory/``: ``MEMORY.md`` holds long-term notes in free Markdown and one
``YYYY-MM-DD.md`` file per day holds that day's notes. The system prompt gets the long-term notes plus the
last seven days (docs/architecture.md, "Extraction and compression", file memory). Keeping this path
alive means a broken SQLite store never leaves the assistant without memory, and ``tierclaw memory
migrate`` can later move these files into SQLite.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import date, timedelta
from pathlib import Path

LONG_TERM_FILE = "MEMORY.md"
RECENT_DAYS = 7
_DAY_NAME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\.md$")


def parse_day_name(name: str) -> date | None:
    """The date a daily-note file name stands for, or None when it is not exactly ``YYYY-MM-DD.md``.

    The regex comes first because ``date.fromisoformat`` also accepts forms such as ``20240501``,
    which myclaw never wrote and which must not be mistaken for notes.
    """
    m = _DAY_NAME.match(name)
    if m is None:
        return None
    try:
        return date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return None


def day_file_name(day: date) -> str:
    """The file name of one day's notes."""
    return f"{day.isoformat()}.md"


class FileMemory:
    """Long-term and daily notes as UTF-8 Markdown files under ``<workspace>/memory/``."""

    def __init__(self, workspace: Path | str) -> None:
        self.workspace = Path(workspace).expanduser()
        self.dir = self.workspace / "memory"

    # ----------------------------------------------------------------- long term

    @property
    def long_term_path(self) -> Path:
        return self.dir / LONG_TERM_FILE

    def read_long_term(self) -> str:
        """The whole of MEMORY.md; empty when it does not exist."""
        return _read(self.long_term_path)

    def write_long_term(self, text: str) -> None:
        """Replace MEMORY.md; a crash mid-write leaves the old file whole (temp file + os.replace)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".MEMORY.", suffix=".tmp", dir=self.dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.long_term_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def append_long_term(self, line: str) -> None:
        """Add one line to MEMORY.md (append mode: concurrent appends never lose each other)."""
        _append(self.long_term_path, line)

    # ----------------------------------------------------------------- daily notes

    def day_path(self, day: date) -> Path:
        return self.dir / day_file_name(day)

    def append_today(self, text: str, today: date | None = None) -> None:
        """Add ``text`` to today's notes (local date unless ``today`` is given), creating the file."""
        _append(self.day_path(today or date.today()), text)

    def read_day(self, day: date) -> str:
        """One day's notes; empty when there are none."""
        return _read(self.day_path(day))

    def recent_days(self, today: date | None = None, days: int = RECENT_DAYS) -> list[tuple[date, str]]:
        """(day, notes) for the last ``days`` days including today, oldest first; empty days skipped."""
        end = today or date.today()
        out: list[tuple[date, str]] = []
        for back in range(days - 1, -1, -1):
            day = end - timedelta(days=back)
            text = self.read_day(day)
            if text.strip():
                out.append((day, text))
        return out

    def day_files(self) -> list[tuple[date, Path]]:
        """Every daily-note file, oldest first; names that are not exact dates are ignored."""
        if not self.dir.is_dir():
            return []
        found = [(parse_day_name(p.name), p) for p in self.dir.iterdir() if p.is_file()]
        return sorted((d, p) for d, p in found if d is not None)

    # ----------------------------------------------------------------- prompt

    def context(self, today: date | None = None) -> str:
        """What goes into the system prompt: long-term notes, then the recent daily notes; "" if none."""
        parts: list[str] = []
        long_term = self.read_long_term().strip()
        if long_term:
            parts.append(f"## Long-term memory\n\n{long_term}")
        recent = self.recent_days(today)
        if recent:
            days = "\n\n".join(f"### {day.isoformat()}\n\n{text.strip()}" for day, text in recent)
            parts.append(f"## Recent notes\n\n{days}")
        return "\n\n".join(parts)


def _read(path: Path) -> str:
    """A notes file as text; a stray invalid byte is replaced rather than losing the whole prompt."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _append(path: Path, text: str) -> None:
    """Append ``text`` as whole lines: a separating newline first if the file lacks one, one after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+b") as f:
        f.seek(0, os.SEEK_END)
        needs_break = False
        if f.tell() > 0:
            f.seek(-1, os.SEEK_END)
            needs_break = f.read(1) != b"\n"
        chunk = ("\n" if needs_break else "") + text + ("" if text.endswith("\n") else "\n")
        f.write(chunk.encode("utf-8"))
