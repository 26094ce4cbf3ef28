"""What reminders say, in English and in Chinese: one table per language with the same keys (a test
checks), and the way a time is written ("Sat 28 Nov 09:00", "11月28日（周六）09:00") so that a person
reads exactly what was scheduled, in their own zone (README "Reminders")."""

from __future__ import annotations

from datetime import datetime

from gateway.reminders.schedule import Repeat

EN: dict[str, str] = {
    "scheduled": "I'll remind you {when}: {text}",
    "zone_note": " (times are {zone}; /timezone to change)",
    "delivered": "⏰ Reminder: {text}",
    "event": "Reminder sent: {text}",
    "late": " (late: due {due})",
    "past": "That time has already passed — when should I remind you?",
    "impossible": "There is no such date. Which day did you mean?",
    "ambiguous": "Which month do you mean? Say the date with its month (for example “on {hint}”).",
    "ambiguous_plain": "Which month do you mean? Say the date with its month.",
    "no_time": "When should I remind you? Say a time, for example “tomorrow at 9” or “in 20 minutes”.",
    "no_text": "What should I remind you of?",
    "too_long": "That reminder is too long ({chars} characters; at most {limit}). Say it shorter.",
    "too_many": "You already have {limit} reminders waiting, the most I keep for one person. Cancel some "
    "with /reminders cancel N first.",
    "too_far": "That is more than {years} years away; I only keep reminders for the next {years} years.",
    "bad_repeat": "I can repeat daily, on weekdays, weekly on given days or monthly on a day.",
    "unavailable": "I couldn't save that reminder just now (my database is unavailable). Please try again.",
    "list_title": "Your reminders ({zone}):",
    "list_line": "[{id}] {when}: {text}",
    "list_none": "You have no reminders waiting. Ask me: “remind me tomorrow at 9 to call the dentist”.",
    "list_failed": "Not delivered:",
    "list_failed_line": "[{id}] {when}: {text} — {why}",
    "cancel_hint": "Cancel one with /reminders cancel N.",
    "cancel_usage": "Usage: /reminders cancel N (a number from /reminders)",
    "cancelled": "Cancelled [{id}]: {text}",
    "no_such": "You have no waiting reminder number {id}. /reminders lists them.",
    "zone_is": "Your time zone: {zone} (local time now {now}).",
    "zone_default": "Your time zone: {zone}, the default (local time now {now}). Set yours with "
    "/timezone NAME, for example /timezone Europe/London.",
    "zone_set": "Time zone set to {zone} (local time now {now}). Waiting reminders keep their clock time.",
    "zone_unknown": "I don't know the time zone “{name}”. Use a name such as Europe/London, a city such as "
    "Tokyo, or an offset such as UTC+8.",
    "zone_suggest": "Is your time zone {zone}? Say /timezone {zone} and I'll use it for reminders.",
    "why_missed": "missed: due while I was offline for too long",
    "why_failed": "could not be delivered",
    "every_day": "every day at {time}",
    "every_weekday": "every weekday at {time}",
    "every_week": "every {days} at {time}",
    "every_month": "on day {day} of every month at {time}",
    "next_run": "{rule}, next {when}",
    "and": " and ",
}

ZH: dict[str, str] = {
    "scheduled": "好的，{when}提醒你：{text}",
    "zone_note": "（按 {zone} 时间；用 /timezone 修改）",
    "delivered": "⏰ 提醒：{text}",
    "event": "已发送提醒：{text}",
    "late": "（晚了：原定 {due}）",
    "past": "这个时间已经过去了，要在什么时候提醒你？",
    "impossible": "没有这个日期。你指的是哪一天？",
    "ambiguous": "你说的是哪个月？请连月份一起说（比如“{hint}”）。",
    "ambiguous_plain": "你说的是哪个月？请连月份一起说。",
    "no_time": "要在什么时候提醒你？说一个时间，比如“明天早上9点”或“20分钟后”。",
    "no_text": "要提醒你什么事？",
    "too_long": "这条提醒太长了（{chars} 个字符，最多 {limit} 个），请说短一些。",
    "too_many": "你已经有 {limit} 条待发的提醒，这是每个人的上限。请先用 /reminders cancel N 取消一些。",
    "too_far": "那是 {years} 年以后的事了，我只保存 {years} 年以内的提醒。",
    "bad_repeat": "我可以每天、每个工作日、每周的某几天或每月的某一天重复提醒。",
    "unavailable": "现在没能保存这条提醒（数据库暂时不可用），请稍后再试。",
    "list_title": "你的提醒（{zone}）：",
    "list_line": "[{id}] {when}：{text}",
    "list_none": "你没有待发的提醒。可以对我说：“明天早上9点提醒我给牙医打电话”。",
    "list_failed": "没能送达的：",
    "list_failed_line": "[{id}] {when}：{text}——{why}",
    "cancel_hint": "用 /reminders cancel N 取消其中一条。",
    "cancel_usage": "用法：/reminders cancel N（/reminders 里的编号）",
    "cancelled": "已取消 [{id}]：{text}",
    "no_such": "你没有编号为 {id} 的待发提醒。/reminders 会列出它们。",
    "zone_is": "你的时区：{zone}（当地时间 {now}）。",
    "zone_default": "你的时区：{zone}，这是默认值（当地时间 {now}）。用 /timezone 名称 设置你的时区，"
    "比如 /timezone Asia/Shanghai。",
    "zone_set": "时区已设为 {zone}（当地时间 {now}）。待发的提醒保持原来的钟点。",
    "zone_unknown": "我不认识时区“{name}”。请用 Asia/Shanghai 这样的名称、东京这样的城市，"
    "或 UTC+8 这样的时差。",
    "zone_suggest": "你的时区是 {zone} 吗？发送 /timezone {zone}，我就按它来提醒你。",
    "why_missed": "错过了：到点时我离线太久",
    "why_failed": "没能送达",
    "every_day": "每天 {time}",
    "every_weekday": "每个工作日 {time}",
    "every_week": "每{days} {time}",
    "every_month": "每月{day}号 {time}",
    "next_run": "{rule}（下次：{when}）",
    "and": "、",
}

_EN_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ZH_DAYS = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")


def words(lang: str) -> dict[str, str]:
    """The table for a language ("zh", else English)."""
    return ZH if lang == "zh" else EN


def moment_text(local: datetime, lang: str, now: datetime | None = None) -> str:
    """A local time as a person reads it: "Sat 28 Nov 09:00" ("… 2027 …" in another year than now's)."""
    year = now is not None and local.year != now.year
    if lang == "zh":
        day = f"{local.year}年" if year else ""
        return f"{day}{local.month}月{local.day}日（{_ZH_DAYS[local.weekday()]}）{local:%H:%M}"
    return local.strftime(f"%a {local.day} %b{' %Y' if year else ''} %H:%M")


def rule_text(rule: Repeat, local: datetime, lang: str) -> str:
    """A repeat rule with its clock time: "every Monday at 08:00", "每周一 08:00"."""
    w = words(lang)
    at = f"{local:%H:%M}"
    if rule.kind == "daily":
        return w["every_day"].format(time=at)
    if rule.kind == "weekdays":
        return w["every_weekday"].format(time=at)
    if rule.kind == "monthly":
        return w["every_month"].format(day=rule.day, time=at)
    names = [_ZH_DAYS[d] if lang == "zh" else _EN_DAYS[d] for d in rule.days]
    if lang == "zh":
        names = [names[0]] + [n.removeprefix("周") for n in names[1:]]
        return w["every_week"].format(days=w["and"].join(names), time=at)
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return w["every_week"].format(days=joined, time=at)


def when_text(local: datetime, rule: Repeat | None, lang: str, now: datetime | None = None) -> str:
    """When a reminder runs: its next time, with its rule when it repeats."""
    moment = moment_text(local, lang, now)
    if rule is None:
        return f"在 {moment} " if lang == "zh" else moment
    return words(lang)["next_run"].format(rule=rule_text(rule, local, lang), when=moment)


def delivered_text(text: str, lang: str, late_due: datetime | None, now_local: datetime) -> str:
    """The message a due reminder sends; ``late_due``: its due time when it is sent late."""
    w = words(lang)
    out = w["delivered"].format(text=text)
    if late_due is not None:
        same_day = late_due.date() == now_local.date()
        due = f"{late_due:%H:%M}" if same_day else moment_text(late_due, lang, now_local)
        out += w["late"].format(due=due)
    return out
