"""A local PostgreSQL server's CPU, read from ``/proc`` (``bench.db_cost``): the postmaster and its children.

Two readings of the same processes: ``/proc/<pid>/stat``'s user + system time, in clock ticks (10 ms:
a backend that ran 3 ms in a window may show 0 or 10), and ``/proc/<pid>/schedstat``'s first field, the
nanoseconds the scheduler ran it — exact, and what a few messages need. A process that ended between two
readings is seen only through the postmaster's reaped children's time (``cutime``/``cstime``, ticks).
"""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")
EXITED = "exited (reaped by the postmaster) and the postmaster"


def stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat``'s fields from the state on (the name may hold spaces); None: gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def parent(pid: int) -> int | None:
    """The parent process of ``pid`` (the postmaster, for a backend)."""
    fields = stat_fields(pid)
    return int(fields[1]) if fields else None


def run_ns(pid: int) -> int | None:
    """Nanoseconds ``pid`` has run on a CPU (``/proc/<pid>/schedstat``); None: gone or not kept."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def children(postmaster: int) -> list[tuple[int, list[str]]]:
    """(pid, stat fields) of the postmaster's living children."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(int(entry))
            if fields and int(fields[1]) == postmaster:
                out.append((int(entry), fields))
    return out


def tree_cpu_s(postmaster: int) -> float | None:
    """User + system seconds of the postmaster, its reaped children and its living children (ticks)."""
    own = stat_fields(postmaster)
    if own is None:
        return None
    ticks = sum(int(v) for v in own[11:15])  # utime, stime, cutime, cstime
    ticks += sum(int(fields[11]) + int(fields[12]) for _, fields in children(postmaster))
    return ticks / _TICKS


def process_kind(pid: int) -> str:
    """What a server process is, from its title: "backend" for a client's, else the title
    ("walwriter", "autovacuum worker", "checkpointer", …)."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
    title = title.removeprefix("postgres: ").strip()
    words = title.split()
    if len(words) >= 3 and ("(" in words[2] or words[2] == "[local]"):  # "user database host(port) state"
        return "backend"
    return title or "?"


def cpu_by_pid(postmaster: int) -> dict[int, tuple[str, float]]:
    """pid -> (kind, user + system seconds in ticks); pid 0: the postmaster's own and reaped children's."""
    out: dict[int, tuple[str, float]] = {}
    own = stat_fields(postmaster)
    if own is not None:
        out[0] = (EXITED, sum(int(v) for v in own[11:15]) / _TICKS)
    for pid, fields in children(postmaster):
        out[pid] = (process_kind(pid), (int(fields[11]) + int(fields[12])) / _TICKS)
    return out


def run_ns_by_pid(postmaster: int) -> dict[int, tuple[str, int]]:
    """pid -> (kind, nanoseconds run: exact); pid 0: the postmaster's own run time plus its reaped
    children's user + system time (the only trace of a process that ended: ticks, in ns)."""
    out: dict[int, tuple[str, int]] = {}
    own = stat_fields(postmaster)
    mine = run_ns(postmaster)
    if own is not None and mine is not None:
        reaped = (int(own[13]) + int(own[14])) * 1_000_000_000 // _TICKS  # cutime, cstime
        out[0] = (EXITED, mine + reaped)
    for pid, _ in children(postmaster):
        ran = run_ns(pid)
        if ran is not None:
            out[pid] = (process_kind(pid), ran)
    return out
