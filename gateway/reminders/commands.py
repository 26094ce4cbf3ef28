"""``/reminders`` (list), ``/reminders cancel N`` and ``/timezone [NAME]``: the chat commands of reminders,
called by ``gateway/commands.py`` in the person's language (README "Chat commands")."""

from __future__ import annotations

from gateway.reminders import wording
from gateway.reminders.book import ReminderBook, local_of, row_repeat
from gateway.reminders.zones import zone_name

LIST_LIMIT = 30


async def reminders_command(book: ReminderBook, owner: str, rest: str, lang: str) -> str:
    """The owner's waiting reminders (and those not delivered), or cancel one."""
    w = wording.words(lang)
    action, _, arg = rest.strip().partition(" ")
    if action.lower() in ("cancel", "取消", "delete", "删除"):
        number = arg.strip().lstrip("#[").rstrip("]")
        if not number.isascii() or not number.isdigit() or len(number) > 18:
            return w["cancel_usage"]
        row = await book.cancel(owner, int(number))
        if row is None:
            return w["no_such"].format(id=number)
        return w["cancelled"].format(id=row.id, text=row.text)
    if action:
        return w["cancel_usage"]
    now, zone, _ = await book.now_local(owner)
    lines = [w["list_title"].format(zone=zone_name(zone))]
    waiting = await book.waiting(owner)
    for row in waiting[:LIST_LIMIT]:
        when = wording.when_text(local_of(row), row_repeat(row), lang, now).strip()
        lines.append(w["list_line"].format(id=row.id, when=when.removeprefix("在 "), text=row.text))
    failed = await book.not_delivered(owner, limit=5)
    if failed:
        lines.append(w["list_failed"])
        for row in failed:
            why = w["why_missed"] if row.status == "missed" else w["why_failed"]
            when = wording.moment_text(local_of(row), lang, now)
            lines.append(w["list_failed_line"].format(id=row.id, when=when, text=row.text, why=why))
    if not waiting and not failed:
        return w["list_none"]
    if waiting:
        lines.append(w["cancel_hint"])
    return "\n".join(lines)


async def timezone_command(book: ReminderBook, owner: str, rest: str, lang: str) -> str:
    """Show the owner's zone, or set it."""
    w = wording.words(lang)
    name = rest.strip()
    if not name:
        now, zone, confirmed = await book.now_local(owner)
        key = "zone_is" if confirmed else "zone_default"
        return w[key].format(zone=zone_name(zone), now=wording.moment_text(now, lang))
    chosen = await book.set_zone(owner, name)
    if chosen is None:
        return w["zone_unknown"].format(name=name[:64])
    now, _, _ = await book.now_local(owner)
    return w["zone_set"].format(zone=zone_name(chosen), now=wording.moment_text(now, lang))
