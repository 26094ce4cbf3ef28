"""What the chat commands say, in English and in Chinese (``gateway/commands.py`` picks the table from the
person's language: the command's own text, else their latest messages in the chat).

One table per language with the same keys, so a reply can never exist in one language only (a test
checks the keys match). ``{name}``-style fields are filled by ``str.format``.
"""

from __future__ import annotations

HELP_TEXT = """Commands:
/new — start a fresh conversation (what you said so far is saved to memory now)
/memory — what I remember about you, numbered
/remember TEXT — remember TEXT now
/forget N — forget memory number N (from /memory); /forget TEXT forgets the best match
/scratchpad — my running note on what you are working on; /scratchpad clear, /scratchpad set TEXT
/status — which model answers and how much I remember about you
/reminders — your reminders, numbered; /reminders cancel N cancels one
/timezone — your time zone for reminders; /timezone Europe/London sets it
/help — this list
/quit — leave the terminal chat (saving memories first)"""

HELP_TEXT_ZH = """命令：
/new — 开始新的对话（之前说的内容现在就存入记忆）
/memory — 我记得的关于你的内容，带编号
/remember 内容 — 现在就记住这段内容
/forget N — 忘掉第 N 条记忆（编号见 /memory）；/forget 内容 忘掉最匹配的一条
/scratchpad — 我对你手头工作的随手笔记；/scratchpad clear 清空，/scratchpad set 内容 替换
/status — 由哪个模型回答，以及我记得多少关于你的内容
/reminders — 你的提醒，带编号；/reminders cancel N 取消一条
/timezone — 提醒用的时区；/timezone Asia/Shanghai 设置它
/help — 显示本列表
/quit — 退出终端聊天（先保存记忆）"""

EN: dict[str, str] = {
    "help": HELP_TEXT,
    "unknown": "Unknown command /{name}.\n" + HELP_TEXT,
    "private_only": "/{name} shows your memories, so ask me in a private chat, not in a group.",
    "new": "Started a new conversation. What you told me before is being saved to memory.",
    "file_notes": "My notes (file memory):\n{notes}",
    "no_file_notes": "I have no notes yet.",
    "about_you": "About you:",
    "what_i_remember": "What I remember:",
    "nothing_yet": "I don't remember anything about you yet. Tell me, or use /remember TEXT.",
    "forget_hint": "Forget one with /forget N.",
    "still_saving": "(Our latest messages are still being turned into memories.)",
    "remember_usage": "Usage: /remember TEXT — for example /remember I prefer answers in Chinese",
    "memory_disabled": "Memory is disabled.",
    "noted_in_file": "Noted in MEMORY.md: {text}",
    "could_not_remember": "I could not remember that: {error}",
    "already_knew": "I already knew that [{id}].",
    "remembered": "Remembered [{id}]: {text}",
    "forget_usage": "Usage: /forget N (a number from /memory) or /forget TEXT",
    "forget_needs_memory": "Forgetting works with the tiered memory; edit MEMORY.md in the workspace "
    "instead.",
    "no_such_memory": "You have no memory number {number}. /memory lists them.",
    "forgot": "Forgot [{id}]: {content}",
    "no_match": "Nothing I remember matches “{text}”. /memory lists what I remember.",
    "model": "Model: {label}",
    "unknown_model": "unknown",
    "status_file_memory": "Memory: notes in MEMORY.md (the tiered memory is off).",
    "status_memory": "Memory: {profile} and {memories} about you, {summaries}; {waiting} waiting to be "
    "saved.",
    "scratchpad_needs_memory": "The scratchpad works with the tiered memory.",
    "scratchpad_cleared": "Cleared my scratchpad about you.",
    "scratchpad_was_empty": "My scratchpad about you was already empty.",
    "scratchpad_set_usage": "Usage: /scratchpad set TEXT (Markdown; replaces the whole note)",
    "scratchpad_replaced": "Scratchpad replaced:\n{content}",
    "scratchpad_usage": "Usage: /scratchpad, /scratchpad clear or /scratchpad set TEXT",
    "scratchpad_empty": "My scratchpad about you is empty: I fill it in as we talk about what you are "
    "working on.",
    "scratchpad": "My scratchpad about you (updated {when} UTC):\n{content}",
    "project": " (project {project})",
    "reminders_off": "Reminders are turned off here (reminders.enabled in the config).",
}

ZH: dict[str, str] = {
    "help": HELP_TEXT_ZH,
    "unknown": "没有 /{name} 这个命令。\n" + HELP_TEXT_ZH,
    "private_only": "/{name} 会显示你的记忆，请在私聊里问我，不要在群里。",
    "new": "已开始新的对话。你之前告诉我的内容正在存入记忆。",
    "file_notes": "我的笔记（文件记忆）：\n{notes}",
    "no_file_notes": "我还没有笔记。",
    "about_you": "关于你：",
    "what_i_remember": "我记得：",
    "nothing_yet": "我还不记得关于你的任何事。告诉我，或者用 /remember 内容。",
    "forget_hint": "用 /forget N 忘掉其中一条。",
    "still_saving": "（我们最近的消息还在存入记忆。）",
    "remember_usage": "用法：/remember 内容，例如 /remember 我喜欢用中文回答",
    "memory_disabled": "记忆功能已关闭。",
    "noted_in_file": "已写入 MEMORY.md：{text}",
    "could_not_remember": "这条没能记住：{error}",
    "already_knew": "这个我已经知道了 [{id}]。",
    "remembered": "记住了 [{id}]：{text}",
    "forget_usage": "用法：/forget N（/memory 里的编号）或 /forget 内容",
    "forget_needs_memory": "忘记功能需要分层记忆；请直接编辑工作区里的 MEMORY.md。",
    "no_such_memory": "没有编号为 {number} 的记忆。/memory 会列出它们。",
    "forgot": "已忘记 [{id}]：{content}",
    "no_match": "我记得的内容里没有与“{text}”匹配的。/memory 会列出我记得的内容。",
    "model": "模型：{label}",
    "unknown_model": "未知",
    "status_file_memory": "记忆：MEMORY.md 里的笔记（分层记忆已关闭）。",
    "status_memory": "记忆：关于你的 {profile} 条档案、{memories} 条记忆、{summaries} 条每日摘要；"
    "{waiting} 条消息等待保存。",
    "scratchpad_needs_memory": "草稿本需要分层记忆。",
    "scratchpad_cleared": "已清空关于你的草稿本。",
    "scratchpad_was_empty": "关于你的草稿本本来就是空的。",
    "scratchpad_set_usage": "用法：/scratchpad set 内容（Markdown，替换整条笔记）",
    "scratchpad_replaced": "草稿本已替换：\n{content}",
    "scratchpad_usage": "用法：/scratchpad、/scratchpad clear 或 /scratchpad set 内容",
    "scratchpad_empty": "关于你的草稿本是空的：我们聊你手头的工作时我会写上。",
    "scratchpad": "关于你的草稿本（更新于 {when} UTC）：\n{content}",
    "project": "（项目 {project}）",
    "reminders_off": "这里的提醒功能已关闭（配置里的 reminders.enabled）。",
}
