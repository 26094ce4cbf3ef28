"""Finding a memory page that is already served, so ``tierclaw dashboard`` prints its link instead of
failing with "address already in use" (issue 37).

A process that serves the page (``tierclaw gateway`` with ``dashboard.enabled``, or ``tierclaw
dashboard``) writes where: ``dashboard_page`` beside the access token (its URL without the token, and its
pid; 0600), and removes it when it stops. Every response of the page carries ``X-Tierclaw-Page``, a
fingerprint of its access token (a hash: it opens nothing), so the command can tell *its* page — the same
memory, the same token, a link that works — from another program on the port, or a page over another
database. Only the standard library is used: the command asks before it loads anything heavy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from memory.files.private import write_private

RECORD_FILE = "dashboard_page"
PAGE_HEADER = "X-Tierclaw-Page"
PROBE_TIMEOUT_S = 2.0


def page_id(token: str) -> str:
    """What a page says it is: a fingerprint of its access token (the token cannot be read back from it)."""
    return hashlib.sha256(b"tierclaw-page\0" + token.encode()).hexdigest()[:24]


def record_page(data_dir: Path, url: str) -> Path | None:
    """Note that this process serves the page at ``url`` (no token in it); None when it cannot be written
    (then the command finds the page by its configured port only)."""
    path = data_dir / RECORD_FILE
    try:
        write_private(path, json.dumps({"url": url, "pid": os.getpid()}) + "\n")
    except OSError:
        return None
    return path


def forget_page(path: Path | None) -> None:
    """Remove the note ``record_page`` wrote, unless another process has written its own since."""
    if path is None:
        return
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


@dataclass(frozen=True, slots=True)
class FoundPage:
    """A page that answers with the token's fingerprint: its address (no token) and who serves it."""

    base_url: str
    pid: int | None  # the serving process, when it left a note

    def link(self, token: str) -> str:
        return f"{self.base_url}?token={token}"


def recorded_page(data_dir: Path) -> tuple[str, int] | None:
    """The URL and pid a serving process noted beside the token, if that process still runs."""
    try:
        note = json.loads((data_dir / RECORD_FILE).read_text(encoding="utf-8"))
        url, pid = str(note["url"]), int(note["pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # a note left by a process that was killed
    except PermissionError:
        pass  # alive, another user's
    return url, pid


def answers_as(base_url: str) -> str | None:
    """The ``X-Tierclaw-Page`` a server at ``base_url`` answers with: None when nothing answers, "" when
    something else does (another program, or a page of an older tierclaw)."""
    request = urllib.request.Request(base_url.rstrip("/") + "/static/style.css", method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
            return str(response.headers.get(PAGE_HEADER, ""))
    except urllib.error.HTTPError as error:
        return str(error.headers.get(PAGE_HEADER, ""))
    except (OSError, ValueError):
        return None


def find_page(token: str, data_dir: Path | None, addresses: list[str]) -> FoundPage | None:
    """The running page whose token is ``token``: the one noted in ``data_dir`` (None: look only at
    ``addresses``), else one at any of ``addresses`` (base URLs, e.g. ``http://127.0.0.1:8765/``)."""
    wanted = page_id(token)
    noted = recorded_page(data_dir) if data_dir is not None else None
    candidates: list[tuple[str, int | None]] = [(noted[0], noted[1])] if noted else []
    candidates += [(address, None) for address in addresses if not noted or address != noted[0]]
    for url, pid in candidates:
        if answers_as(url) == wanted:
            return FoundPage(url, pid)
    return None


def base_url(host: str, port: int) -> str:
    """``http://host:port/`` (an IPv6 address in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"
