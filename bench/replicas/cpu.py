"""Where a throughput run's CPU goes: seconds of CPU (user + system, from /proc on Linux) spent by the
gateway replicas, the PostgreSQL backends serving the trial's database, the model stub, and the bench
process itself (the round-robin forwarder and the local Telegram server run in its threads, beside the
webhook sender). Read before and after the run; the difference is the run's. Elsewhere than Linux
every figure is null (bench/README.md, "Replicas")."""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")


def _ticks() -> float:
    return float(os.sysconf("SC_CLK_TCK"))


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` so far (its threads included), or None when it is gone."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / _ticks()  # utime, stime (fields 14 and 15 of stat)


def _cmdline(pid: str) -> str:
    try:
        return (PROC / pid / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _parent(pid: str) -> int | None:
    try:
        return int((PROC / pid / "stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def matching(*needles: str, parent: int | None = None) -> list[int]:
    """Processes whose command line holds every one of ``needles`` (and whose parent is ``parent``)."""
    if not PROC.is_dir():
        return []
    return [
        int(p.name)
        for p in PROC.iterdir()
        if p.name.isdigit()
        and all(n in _cmdline(p.name) for n in needles)
        and (parent is None or _parent(p.name) == parent)
    ]


def snapshot(replica_pids: list[int], database_name: str, stub_marker: str) -> dict[str, float | None]:
    """CPU seconds so far of each group (see the module docstring)."""
    if not PROC.is_dir():
        return {"gateways": None, "postgres": None, "model_stub": None, "bench": None}

    def total(pids: list[int]) -> float:
        return sum(cpu for cpu in map(process_cpu, pids) if cpu is not None)

    return {
        "gateways": total(replica_pids),
        "postgres": total(matching("postgres: ", f" {database_name} ")) if database_name else None,
        "model_stub": total(matching(stub_marker, parent=os.getpid())),
        "bench": process_cpu(os.getpid()),
    }


def spent(before: dict[str, float | None], after: dict[str, float | None]) -> dict[str, float | None]:
    """``after`` - ``before`` per group, rounded (a backend that ended in between loses its share)."""
    out: dict[str, float | None] = {}
    for key, end in after.items():
        start = before.get(key)
        out[key] = None if end is None or start is None else round(end - start, 2)
    return out
