"""What the person is told about their voice notes, photos and files, in their language (English or
Chinese: the same keys in both tables, a test checks). Every problem gets one plain sentence saying what
happened and what they can do; nothing technical, never a traceback."""

from __future__ import annotations

EN = {
    "heard": "🎤 I heard: “{text}”",
    "heard_nothing": "🎤 I couldn't make out any words in your {kind}. I kept it.",
    "offline_hear": "[offline model] I kept your {kind}; with a transcription model configured I could hear "
    "it. You can find it again by its caption, name or date.",
    "cannot_hear": "I kept your {kind}, but my transcription service isn't set up to hear it "
    "(media.transcription), so I couldn't listen to it.",
    "offline_see": "[offline model] I kept your {kind}; with a vision model configured I could see it. You "
    "can find it again by its caption, name or date.",
    "cannot_see": "I kept your {kind}, but none of my models can look at images, so I couldn't see it.",
    "offline_read": "[offline model] I read {name} ({words} words) and kept it; ask me for it any time.",
    "kept_file": "I kept {name} ({type}). I can't read this kind of file, but I can send it back when you "
    "ask.",
    "kept_video": "I kept your video {name}. I can't watch videos, but I can send it back when you ask.",
    "too_big": "That {kind} is too big for me ({size}; my limit is {limit}). Could you send a smaller one?",
    "empty": "That {kind} is empty (0 bytes), so there was nothing to keep.",
    "gone": "I couldn't download that {kind} — {platform} no longer has it. Could you send it again?",
    "refused": "{platform} refused to give me that {kind}. Could you send it again?",
    "unreachable": "I couldn't download that {kind} just now (the connection failed). Please send it "
    "again in a moment.",
    "bad_audio": "I couldn't listen to that {kind}: the file seems damaged or in a format I can't read. I "
    "kept it anyway.",
    "hear_timeout": "Transcribing your {kind} took too long, so I couldn't hear it this time. I kept it — "
    "please try again in a moment.",
    "hear_down": "My transcription service didn't answer, so I couldn't hear your {kind}. I kept it — please "
    "try again in a moment.",
    "see_down": "The model that looks at images didn't answer, so I couldn't see your {kind}. I kept it.",
    "encrypted": "{name} is password-protected, so I can't read it. I kept it; send an unlocked copy if you "
    "want me to read it.",
    "no_text": "{name} has no text I can read (scanned pages?). I kept it; photos of the pages I could look "
    "at.",
    "zip_bomb": "{name} unpacks to far more than its size (it looks like a zip bomb), so I didn't open it.",
    "corrupt": "I couldn't open {name}: the file seems damaged. I kept it as it is.",
    "wrong_type": "{name} says it is {claimed} but it is really {actual}; I treated it as {actual}.",
    "sent_back": "[offline model] Here is {name} from {date}.",
    "not_found": "[offline model] I couldn't find a file like that among the ones you sent me.",
    "send_failed": "I found {name} but couldn't send it: {reason}.",
}
ZH = {
    "heard": "🎤 我听到的是：“{text}”",
    "heard_nothing": "🎤 你的{kind}里我没听出文字，已保存。",
    "offline_hear": "[离线模型] 我保存了你的{kind}；配置语音识别模型后我才能听懂它。"
    "以后可以按说明文字、文件名或日期找到它。",
    "cannot_hear": "我保存了你的{kind}，但语音识别服务没有配置好（media.transcription），所以没法听。",
    "offline_see": "[离线模型] 我保存了你的{kind}；配置能看图的模型后我才能看懂它。"
    "以后可以按说明文字、文件名或日期找到它。",
    "cannot_see": "我保存了你的{kind}，但我的模型都看不了图片，所以没法看。",
    "offline_read": "[离线模型] 我读了{name}（{words}字/词）并保存了，随时可以找我要。",
    "kept_file": "我保存了{name}（{type}）。这种文件我读不了，但你需要时我可以发回给你。",
    "kept_video": "我保存了你的视频{name}。视频我看不了，但你需要时我可以发回给你。",
    "too_big": "这个{kind}太大了（{size}，上限是{limit}），能发一个小一点的吗？",
    "empty": "这个{kind}是空的（0 字节），没有可以保存的内容。",
    "gone": "这个{kind}下载不了——{platform}那边已经没有了，能再发一次吗？",
    "refused": "{platform}拒绝了这个{kind}的下载，能再发一次吗？",
    "unreachable": "这个{kind}暂时下载不了（网络连接失败），请稍后再发一次。",
    "bad_audio": "这个{kind}我听不了：文件好像损坏了，或者格式不支持。我还是保存了它。",
    "hear_timeout": "识别你的{kind}超时了，这次没能听懂。已经保存，请稍后再试。",
    "hear_down": "语音识别服务没有响应，这次没能听你的{kind}。已经保存，请稍后再试。",
    "see_down": "看图的模型没有响应，这次没能看你的{kind}。已经保存。",
    "encrypted": "{name}有密码保护，我读不了。已经保存；想让我读的话请发一份没加密的。",
    "no_text": "{name}里没有可读的文字（可能是扫描件）。已经保存；发页面的照片我可以看。",
    "zip_bomb": "{name}解压后远超它本身的大小（像是压缩炸弹），所以我没有打开它。",
    "corrupt": "{name}打不开：文件好像损坏了。我按原样保存了。",
    "wrong_type": "{name}声称是{claimed}，实际上是{actual}；我按{actual}处理了。",
    "sent_back": "[离线模型] 这是你{date}发的{name}。",
    "not_found": "[离线模型] 在你发给我的文件里没找到这样的。",
    "send_failed": "找到了{name}，但发送失败：{reason}。",
}
KINDS_EN = {
    "voice": "voice note",
    "audio": "audio",
    "video_note": "video message",
    "photo": "photo",
    "image": "image",
    "document": "file",
    "file": "file",
    "video": "video",
}
KINDS_ZH = {
    "voice": "语音",
    "audio": "音频",
    "video_note": "视频消息",
    "photo": "图片",
    "image": "图片",
    "document": "文件",
    "file": "文件",
    "video": "视频",
}
PLATFORMS = {"telegram": "Telegram", "feishu": "Feishu"}
PLATFORMS_ZH = {"telegram": "Telegram", "feishu": "飞书"}
HEARD_CHARS = 200  # of a transcript quoted back


def say(key: str, chinese: bool, **values: object) -> str:
    """One sentence of the tables above, in the person's language."""
    return (ZH if chinese else EN)[key].format(**values)


def kind_name(kind: str, chinese: bool) -> str:
    """What a kind of attachment is called in the person's language."""
    return (KINDS_ZH if chinese else KINDS_EN).get(kind, kind)


def platform_name(channel: str, chinese: bool) -> str:
    return (PLATFORMS_ZH if chinese else PLATFORMS).get(channel, channel)


def size_text(size: int) -> str:
    """A size as a person reads it: 21.0 MB, 340 KB, 12 bytes."""
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size // 1024} KB"
    return f"{size} bytes"


def quoted(text: str) -> str:
    """A transcript cut to ``HEARD_CHARS`` for the heard line."""
    line = " ".join(text.split())
    return line if len(line) <= HEARD_CHARS else line[: HEARD_CHARS - 1] + "…"
