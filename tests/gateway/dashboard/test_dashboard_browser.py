"""The memory page in a real browser: headless Debian Chromium driven by Playwright, against a real
``tierclaw dashboard`` process on 127.0.0.1, opened through the URL it printed.

Chromium comes from Debian (``.ci/run`` installs it); Playwright's own browser download cannot be reached
here, so the system browser is launched by path. Screenshots of the main pages are saved under the test
run's temporary directory. Without Chromium they are skipped, unless REQUIRE_BROWSER_TESTS=1 (CI).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import selectors
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

from gateway.dashboard.server import RunningDashboard
from memory.engine import MemoryEngine
from memory.pipeline.buffer import ExtractionBuffer
from memory.records import Episode, Fact
from tests.support.waiting import PROCESS_CEILING

ALICE, BOB = "telegram:42", "user:bob"
CHROMIUM_FLAGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # this machine's closed network refuses them, many at a time
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """The system Chromium. Without one these tests are skipped on a developer's machine (the README's
    test command must work on a fresh one) and fail in CI, which sets REQUIRE_BROWSER_TESTS=1 after
    installing it (.ci/run)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "the memory page tests need Chromium: apt-get install chromium"
        if os.environ.get("REQUIRE_BROWSER_TESTS") == "1":
            pytest.fail(why)
        pytest.skip(why)
    return found


async def _fill(db: Path) -> None:
    async with await MemoryEngine.open(db) as engine:
        await engine.write(ALICE, Fact("My name is Alice", tier=1, category="identity"))
        for i in range(1, 61):
            await engine.write(
                ALICE,
                Fact(f"Deploy {i} of tierclaw went out blue-green", category="decision", project="tierclaw"),
            )
        await engine.write(
            ALICE, Fact("<script>alert('xss')</script> was pasted in a chat", category="event")
        )
        await engine.events.add(
            ALICE,
            "Alice planned the trip to Hangzhou",
            episode=Episode(goal="plan the trip", outcome="partial", entities=["Hangzhou"]),
        )
        await engine.scratchpad.put(ALICE, "- focus: the Hangzhou trip")
        for role, said in (("user", "Which train goes to Hangzhou?"), ("assistant", "The G7311 at 9:00.")):
            await engine.conversation.record(ALICE, channel="telegram", chat_id="42", role=role, content=said)
        buffer = ExtractionBuffer(engine.store.buffer)
        await buffer.append(
            ALICE,
            channel="telegram",
            chat_id="42",
            sender_id="42",
            role="user",
            content="My dog is called Biscuit",
        )
        await engine.write(BOB, Fact("Bob likes green tea"))
        await engine.write(BOB, Fact("鲍勃最喜欢的茶是龙井 🍵，他的猫叫豆豆 🐱"))
        await buffer.append(
            BOB,
            channel="cli",
            chat_id="b",
            sender_id="b",
            role="user",
            content="I work at Acme Corp as a data engineer",
        )
        ids = [row[0] for row in await engine.store.buffer.oldest(BOB, due_only=False)]
        await engine.store.buffer.mark_failed(ids, 5, 60.0, True, "the model answered 500")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``tierclaw dashboard`` process over a filled database; yields the URL it printed."""
    home = tmp_path_factory.mktemp("dashboard-home")
    db = home / "data" / "memory.db"
    db.parent.mkdir()
    # In a thread of its own: once Playwright's sync API has started, this thread has a running loop.
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, _fill(db)).result()
    # Keyword search: the page's ranking is then the same however far the embedding backfill has got.
    env = {**os.environ, "HOME": str(home), "PYTHONUNBUFFERED": "1", "TIERCLAW_EMBEDDING_PROVIDER": "none"}
    for name in ("TIERCLAW_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL"):  # embedded config, offline model
        env.pop(name, None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway.cli", "dashboard", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout=PROCESS_CEILING)
        line = proc.stdout.readline() if ready else ""
        found = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        assert found, f"no ready URL; stdout {line!r}, stderr {proc.stderr.read() if proc.poll() else ''}"
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=PROCESS_CEILING)


# Playwright's waits are ceilings: an assertion retries until it holds, an action until it can act (its
# defaults, 5 s and 30 s, are margins on a loaded machine where the dashboard process runs at nice 19).
CEILING_MS = 60_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    expect.set_options(timeout=CEILING_MS)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        try:
            yield b
        finally:
            b.close()
            expect.set_options(timeout=5_000)  # Playwright's default, for anything after this module


def new_context(browser: Browser, **options: Any) -> BrowserContext:
    """A browser context whose actions and navigations wait up to ``CEILING_MS``."""
    context = browser.new_context(**options)
    context.set_default_timeout(CEILING_MS)
    context.set_default_navigation_timeout(CEILING_MS)
    return context


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("dashboard-screenshots")


@pytest.fixture
def page(browser: Browser, server: str) -> Iterator[Page]:
    """A fresh browser context that opened the printed URL (so it holds a session)."""
    context = new_context(browser, accept_downloads=True, viewport={"width": 1100, "height": 900})
    tab = context.new_page()
    tab.goto(server)
    try:
        yield tab
    finally:
        context.close()


def origin(server: str) -> str:
    return server.split("/?")[0]


def person(page: Page, server: str, owner: str = ALICE, tail: str = "") -> None:
    page.goto(origin(server) + "/people/" + owner.replace(":", "%3A") + tail)


def test_the_printed_url_opens_the_page_and_drops_the_token(page: Page, server: str, shots: Path) -> None:
    assert page.url == origin(server) + "/"
    expect(page.get_by_role("heading", name="People")).to_be_visible()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name=BOB))
    expect(row).to_contain_text("1")  # Bob's dead letter
    page.screenshot(path=shots / "owners.png", full_page=True)


def test_without_the_token_the_browser_sees_401(browser: Browser, server: str) -> None:
    context = new_context(browser)
    tab = context.new_page()
    response = tab.goto(origin(server) + "/people/telegram%3A42")
    assert response is not None and response.status == 401
    expect(tab.get_by_role("heading", name="Access token needed")).to_be_visible()
    context.close()


def test_search_filters_and_pages(page: Page, server: str, shots: Path) -> None:
    person(page, server)
    expect(page.locator("#result-count")).to_contain_text("62 found")
    expect(page.locator("#result-count")).to_contain_text("page 1 of 2")
    page.get_by_label("Search").fill("deploy 42")
    page.get_by_label("Search").press("Enter")
    first = page.locator("table.memories tbody tr").first
    expect(first).to_contain_text("Deploy 42 of tierclaw")
    page.locator("form.filters").get_by_label("Category").select_option("identity")
    page.get_by_label("Search").fill("")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#result-count")).to_contain_text("1 found")
    expect(page.locator("table.memories")).to_contain_text("My name is Alice")
    person(page, server, tail="?sort=date")
    page.get_by_role("link", name="next page →").click()
    expect(page.locator("#result-count")).to_contain_text("page 2 of 2")
    person(page, server)
    page.screenshot(path=shots / "person.png", full_page=True)


def test_add_edit_forget_restore_and_purge_with_confirmation(page: Page, server: str, shots: Path) -> None:
    person(page, server)
    add = page.locator("form.card").last
    add.get_by_label("Text").fill("Alice's favourite editor is Helix")
    add.get_by_label("Category").select_option("config")
    add.get_by_role("button", name="Add").click()
    expect(page.locator(".flash")).to_have_text(re.compile(r"Saved as #\d+\."))
    memory_url = page.url
    expect(page.locator(".memory-text")).to_have_text("Alice's favourite editor is Helix")

    page.get_by_label("Text").fill("Alice's favourite editor is Zed")
    page.get_by_label("Importance").fill("0.9")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Saved #")
    expect(page.locator(".memory-text")).to_have_text("Alice's favourite editor is Zed")
    expect(page.locator("dl.facts")).to_contain_text("0.90")
    page.screenshot(path=shots / "memory.png", full_page=True)

    page.get_by_role("button", name="Forget (archive)").click()
    expect(page.locator(".flash")).to_contain_text("archived")
    expect(page.get_by_role("heading", level=1)).to_contain_text("archived")
    person(page, server, tail="?q=Zed")
    expect(page.locator("#result-count")).to_contain_text("0 found")  # no longer recalled
    page.goto(memory_url)
    page.get_by_role("button", name="Restore").click()
    expect(page.locator(".flash")).to_contain_text("Restored")
    person(page, server, tail="?q=Zed")
    expect(page.locator("#result-count")).to_contain_text("1 found")

    page.goto(memory_url)
    page.get_by_role("link", name="Delete for good…").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("for good?")
    page.screenshot(path=shots / "purge.png", full_page=True)
    page.get_by_role("link", name="Cancel").click()
    assert unquote(page.url) == unquote(memory_url)  # cancelling keeps it
    page.get_by_role("link", name="Delete for good…").click()
    page.get_by_role("button", name="Yes, delete it for good").click()
    expect(page.locator(".flash")).to_contain_text("for good")
    response = page.goto(memory_url)
    assert response is not None and response.status == 404


def test_a_script_in_a_memory_is_shown_as_text_and_never_runs(page: Page, server: str) -> None:
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    person(page, server, tail="?q=pasted")
    cell = page.locator("td.content", has_text="pasted in a chat")
    expect(cell).to_contain_text("<script>alert('xss')</script>")
    cell_link = page.locator("table.memories tbody tr").first.get_by_role("link")
    cell_link.click()
    expect(page.locator(".memory-text")).to_contain_text("<script>")
    # The page's load event (its parse and every script it could run are over: the text above can show
    # while the document is still "interactive", stop 55 saw it under load), then a round trip to the page:
    # an alert its parse opened blocks the page until the handler dismissed it (and recorded it), so nothing
    # can still be on its way once this returns.
    page.wait_for_load_state("load")
    assert page.evaluate("() => document.readyState") == "complete"
    assert dialogs == []
    assert page.locator("main script").count() == 0


def test_export_downloads_json_and_markdown(page: Page, server: str) -> None:
    person(page, server, tail="/operations")
    with page.expect_download() as caught:
        page.get_by_role("link", name="Download JSON").click()
    doc = json.loads(Path(caught.value.path()).read_text(encoding="utf-8"))
    assert caught.value.suggested_filename == "tierclaw-memory-telegram_42.json"
    assert doc["format"] == "tierclaw-memory-export" and doc["owner"] == ALICE
    assert any(m["content"] == "My name is Alice" for m in doc["memories"])
    with page.expect_download() as caught:
        page.get_by_role("link", name="Download Markdown").click()
    text = Path(caught.value.path()).read_text(encoding="utf-8")
    assert text.startswith("# tierclaw memory export: telegram:42") and "Hangzhou" in text


def test_dead_letters_are_retried_and_extracted(page: Page, server: str, shots: Path) -> None:
    person(page, server, owner=BOB, tail="/operations")
    expect(page.get_by_role("heading", name="Dead letters (1)")).to_be_visible()
    expect(page.locator("ul.turns")).to_contain_text("the model answered 500")
    page.screenshot(path=shots / "operations.png", full_page=True)
    page.get_by_role("button", name="Retry dead letters").click()
    expect(page.locator(".flash").first).to_contain_text("Re-queued 1 dead-letter message.")
    expect(page.locator(".flash").nth(1)).to_contain_text("Extracted 1 message ")
    expect(page.get_by_role("heading", name="Dead letters (0)")).to_be_visible()
    person(page, server, owner=BOB, tail="?q=Acme")
    expect(page.locator("table.memories")).to_contain_text("Acme")


def test_extract_now_turns_buffered_messages_into_memories(page: Page, server: str) -> None:
    person(page, server, tail="/operations")
    expect(page.get_by_role("heading", name="Buffered messages (1)")).to_be_visible()
    page.get_by_role("button", name="Extract now").click()
    expect(page.locator(".flash")).to_contain_text("Extracted 1 message ")
    expect(page.get_by_role("heading", name="Buffered messages (0)")).to_be_visible()
    expect(page.get_by_role("button", name="Extract now")).to_be_disabled()
    person(page, server, tail="?q=Biscuit")
    expect(page.locator("table.memories")).to_contain_text("Biscuit")


def test_episodes_by_day_the_scratchpad_and_what_was_said(page: Page, server: str, shots: Path) -> None:
    person(page, server, tail="/time")
    expect(page.locator("ul.episodes")).to_contain_text("Alice planned the trip to Hangzhou")
    expect(page.locator("ul.episodes")).to_contain_text("Outcome: partial")
    note = page.get_by_label("Note (Markdown, about 2,000 characters)")
    expect(note).to_have_value("- focus: the Hangzhou trip")
    note.fill("- focus: the Hangzhou trip\n- next: book the train")
    page.get_by_role("button", name="Save note").click()
    expect(page.locator(".flash")).to_contain_text("Scratchpad saved")
    expect(note).to_have_value("- focus: the Hangzhou trip\n- next: book the train")
    page.get_by_label("Search 3 kept conversation turns").fill("train")  # the buffered turn is kept too
    page.get_by_role("button", name="Search turns").click()
    # The turn that says "train" first (issue 37), with the answer to it around it.
    expect(page.locator("ol.said li.hit").first).to_contain_text("Which train goes to Hangzhou?")
    expect(page.locator("ol.said").first).to_contain_text("The G7311 at 9:00.")
    page.screenshot(path=shots / "time.png", full_page=True)


def test_keyboard_labels_and_a_phone_width_screen(browser: Browser, server: str, shots: Path) -> None:
    context = new_context(browser, viewport={"width": 375, "height": 740})
    tab = context.new_page()
    tab.goto(server)
    person(tab, server)
    tab.keyboard.press("Tab")
    assert tab.evaluate("document.activeElement.textContent") == "Skip to content"
    unlabelled = tab.evaluate(
        "[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]"
        ".filter(e => e.labels.length === 0).map(e => e.name)"
    )
    assert unlabelled == []
    assert tab.evaluate("document.documentElement.scrollWidth") <= 375  # nothing wider than the phone
    tab.get_by_label("Search").focus()
    tab.keyboard.type("deploy 7")
    tab.keyboard.press("Enter")
    expect(tab.locator("table.memories tbody tr").first).to_contain_text("Deploy 7 of")
    tab.screenshot(path=shots / "person-phone.png", full_page=True)
    context.close()


# --- issue 37, item 9: the page at a laptop's and a phone's width, its fonts and its chart -------------

WIDTHS = (1366, 390)


def _inside(tab: Page, selector: str, width: int) -> list[str]:
    """The texts of the ``selector`` elements that are not wholly on the screen horizontally."""
    outside = []
    for cell in tab.locator(selector).all():
        box = cell.bounding_box()
        if box is None or box["x"] < 0 or box["x"] + box["width"] > width + 0.5 or box["width"] == 0:
            outside.append(cell.inner_text())
    return outside


@pytest.mark.parametrize("width", WIDTHS)
def test_the_tables_fit_the_screen_with_every_column_shown(
    browser: Browser, server: str, shots: Path, width: int
) -> None:
    context = new_context(browser, viewport={"width": width, "height": 900})
    tab = context.new_page()
    tab.goto(server)
    people = "main table tbody tr > *"
    assert tab.locator(people).count() == 2 * 9  # two people, nine columns each
    assert _inside(tab, people, width) == []  # nothing cut off or to scroll to
    assert tab.evaluate("document.documentElement.scrollWidth") <= width
    bob = tab.locator("main table tbody tr").filter(has=tab.get_by_role("link", name=BOB))
    if width < 640:  # a card per person: each number says what it counts
        dead = bob.locator('td[data-label="Dead letters"]')
        expect(dead).to_have_text(re.compile(r"^\d+$"))  # earlier tests may have retried it
        label = dead.evaluate("e => getComputedStyle(e, '::before').content")
        assert label == '"Dead letters "'
        assert (bob.bounding_box() or {"height": 1e9})["height"] < 320  # a card, not a tall squeezed row
    tab.screenshot(path=shots / f"owners-{width}.png", full_page=True)
    person(tab, server)
    memories = "table.memories tbody tr > td"
    assert tab.locator(memories).count() == 50 * 7
    assert _inside(tab, memories, width) == []
    first = tab.locator("table.memories tbody tr").first
    for column in ("Category", "Project", "Score", "Used", "Created"):  # none of them dropped
        cell = first.locator(f'td[data-label="{column}"]')
        expect(cell).to_be_visible()
    tab.screenshot(path=shots / f"person-{width}.png", full_page=True)
    context.close()


def _fonts_installed() -> bool:
    listed = subprocess.run(["fc-list"], capture_output=True, text=True, check=False).stdout
    found = "Noto Sans CJK" in listed and "Noto Color Emoji" in listed
    if not found and os.environ.get("REQUIRE_BROWSER_TESTS") == "1":
        pytest.fail("the font test needs apt-get install fonts-noto-cjk fonts-noto-color-emoji")
    return found


def test_chinese_and_emoji_are_drawn_with_fonts_that_have_them(page: Page, server: str) -> None:
    person(page, server, owner=BOB)
    cell = page.locator("td.content", has_text="龙井")
    family = cell.evaluate("e => getComputedStyle(e).fontFamily")
    assert "Noto Sans CJK SC" in family and "Noto Color Emoji" in family  # the stack names both
    if not _fonts_installed():
        pytest.skip("apt-get install fonts-noto-cjk fonts-noto-color-emoji to see them drawn")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    rows = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "td.content"})["nodeIds"]
    used: set[str] = set()
    for node in rows:
        used |= {f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]}
    assert any("CJK" in name for name in used), used  # 鲍勃…: not boxes
    assert any("Emoji" in name for name in used), used  # 🍵 🐱


@pytest.fixture(scope="module")
def gateway_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The page as ``tierclaw gateway`` serves it, after the gateway answered three messages (its reply
    timings charted); in a thread with its own event loop, beside Playwright's."""
    from gateway.app import Runtime
    from gateway.cli.run import start_page
    from gateway.config import load_config
    from tests.support.typed_channel import ChatChannel

    home = tmp_path_factory.mktemp("gateway-page")
    raw = {
        "provider": {"type": "offline"},
        "agent": {"workspace": str(home / "ws")},
        "memory": {"dbPath": str(home / "data" / "memory.db"), "embedding": {"provider": "none"}},
        "dashboard": {"enabled": True, "port": 0},
    }
    (home / "config.json").write_text(json.dumps(raw), encoding="utf-8")
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    channel = ChatChannel()

    async def up() -> tuple[Runtime, RunningDashboard]:
        runtime = await Runtime.open(load_config(home / "config.json", env={}), [channel])
        await runtime.start(schedule=False)
        page = await start_page(runtime)
        for text in ("I live in Lyon", "where do I live?", "My dog is called Biscuit"):
            await channel.say(text, timeout=60)
        return runtime, page

    runtime, running = asyncio.run_coroutine_threadsafe(up(), loop).result(180)
    try:
        yield running.url
    finally:

        async def down() -> None:
            await running.stop()
            await runtime.close()

        asyncio.run_coroutine_threadsafe(down(), loop).result(120)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_reply_time_chart_draws_what_its_caption_says(
    browser: Browser, gateway_page: str, shots: Path, width: int
) -> None:
    context = new_context(browser, viewport={"width": width, "height": 900})
    tab = context.new_page()
    tab.goto(gateway_page)
    tab.goto(origin(gateway_page) + "/people/test%3Au1/operations")
    section = tab.locator("section", has=tab.get_by_role("heading", name="Reply-path retrieval time"))
    expect(section).to_contain_text("Last 3 messages: p50")
    chart = section.locator("svg.chart")
    dots = chart.locator("circle")
    assert dots.count() == 2 * 3  # p50 and p95 of each of the three messages
    for dot in dots.all():
        box = dot.bounding_box()
        assert box is not None and box["width"] > 0 and 0 <= box["x"] <= width
    line = chart.locator("polyline").first.bounding_box()
    assert line is not None and line["width"] > 50  # a line across the plot, not a point
    for label in chart.locator("text").all():  # readable on a phone too, and not cut off at the edge
        box = label.bounding_box()
        assert box is not None and box["height"] >= 8 and box["x"] >= 0, (label.inner_text(), box)
    tab.screenshot(path=shots / f"operations-{width}.png", full_page=True)
    context.close()
