"""Each person's time zone: what ``/timezone`` accepts, and a zone heard in what they say.

A person's zone is theirs once they set or confirm it (``/timezone Europe/London``, the model's
``reminder_timezone`` tool after they said yes); until then reminders use the default — ``agent.timezone``,
else the top-level ``timezone``, else the machine's (README "Reminders"). ``/timezone`` takes an IANA name
in any case ("europe/london"), a city whose zone is named after it ("London", "New York", "Tokyo"), a
common Chinese city or country name (上海, 东京, 伦敦), UTC, or a fixed offset ("UTC+8", "GMT-5").
``mentioned_zone`` finds a place in a first-person statement ("I live in Tokyo", "我在上海") so the
assistant can ask whether to use its zone — it never changes a zone on its own.
"""

from __future__ import annotations

import re
import zoneinfo
from functools import lru_cache
from zoneinfo import ZoneInfo

# Places people name in Chinese, for the zones of the places (not a list of sentences).
CHINESE_PLACES = {
    "中国": "Asia/Shanghai", "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "广州": "Asia/Shanghai",
    "深圳": "Asia/Shanghai", "杭州": "Asia/Shanghai", "南京": "Asia/Shanghai", "成都": "Asia/Shanghai",
    "武汉": "Asia/Shanghai", "西安": "Asia/Shanghai", "重庆": "Asia/Shanghai", "天津": "Asia/Shanghai",
    "苏州": "Asia/Shanghai", "香港": "Asia/Hong_Kong", "澳门": "Asia/Macau", "台北": "Asia/Taipei",
    "台湾": "Asia/Taipei", "东京": "Asia/Tokyo", "日本": "Asia/Tokyo", "大阪": "Asia/Tokyo",
    "首尔": "Asia/Seoul", "韩国": "Asia/Seoul", "新加坡": "Asia/Singapore", "曼谷": "Asia/Bangkok",
    "吉隆坡": "Asia/Kuala_Lumpur", "迪拜": "Asia/Dubai", "印度": "Asia/Kolkata", "伦敦": "Europe/London",
    "英国": "Europe/London", "巴黎": "Europe/Paris", "法国": "Europe/Paris", "柏林": "Europe/Berlin",
    "德国": "Europe/Berlin", "莫斯科": "Europe/Moscow", "纽约": "America/New_York",
    "洛杉矶": "America/Los_Angeles", "旧金山": "America/Los_Angeles", "西雅图": "America/Los_Angeles",
    "芝加哥": "America/Chicago", "多伦多": "America/Toronto", "温哥华": "America/Vancouver",
    "悉尼": "Australia/Sydney", "墨尔本": "Australia/Melbourne", "奥克兰": "Pacific/Auckland",
}  # fmt: skip
_OFFSET = re.compile(r"^(?:utc|gmt)\s*([+-])\s*(\d{1,2})(?::?00)?$", re.IGNORECASE)
_MENTION_EN = re.compile(
    r"\b(?:i\s+live\s+in|i'?m\s+(?:now\s+)?(?:living\s+)?in|i\s+am\s+(?:now\s+)?in|i\s+moved\s+to|"
    r"i'?m\s+based\s+in|my\s+time\s*zone\s+is|i'?m\s+on)\s+([A-Za-z][A-Za-z .'/_+-]{1,40}?)"
    r"(?:\s+(?:time|now|these days))?[.,!;]?$",
    re.IGNORECASE,
)
_MENTION_ZH = re.compile(
    r"(?:我(?:现在)?(?:住)?在|我搬到了?|我人在|我的时区是)([\u4e00-\u9fff]{2,4}?)(?:了|啦|呢|工作|生活|住)?[。！!]?$"
)


@lru_cache(maxsize=1)
def _by_name() -> dict[str, str]:
    """Every IANA zone by its lower-cased name and by its city ("new_york" and "new york")."""
    names: dict[str, str] = {}
    for name in sorted(zoneinfo.available_timezones()):
        names.setdefault(name.lower(), name)
        if "/" in name and not name.startswith("Etc/"):
            city = name.rsplit("/", 1)[1].lower()
            names.setdefault(city, name)
            names.setdefault(city.replace("_", " "), name)
    return names


def find_zone(text: str) -> ZoneInfo | None:
    """The zone ``text`` names (see the module docstring), or None."""
    key = " ".join(text.strip().split())
    if not key or len(key) > 64:
        return None
    if key in CHINESE_PLACES:
        return ZoneInfo(CHINESE_PLACES[key])
    offset = _OFFSET.match(key)
    if offset:
        hours = int(offset[2])
        if hours > 14:
            return None
        sign = "-" if offset[1] == "+" else "+"  # Etc/GMT-8 is UTC+8
        return ZoneInfo(f"Etc/GMT{sign}{hours}" if hours else "UTC")
    name = _by_name().get(key.lower())
    return ZoneInfo(name) if name else None


def mentioned_zone(text: str) -> ZoneInfo | None:
    """The zone of a place a first-person statement says the person is in, or None."""
    text = text.strip()
    for pattern in (_MENTION_EN, _MENTION_ZH):
        match = pattern.search(text)
        if match:
            place = match[1].strip()
            found = find_zone(place) or find_zone(re.sub(r"^the\s+", "", place, flags=re.I))
            if found is not None:
                return found
    return None


def zone_name(zone: object) -> str:
    """A zone's IANA name ("Europe/London"), for storing and showing."""
    return str(getattr(zone, "key", None) or zone)
