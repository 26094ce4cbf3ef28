"""Questions about the world, for the gate (issue 35, round 11): "other", never "asks about own life".

Why: on the dev sets the gate read general-knowledge and how-to questions typed casually ("how many X in a
Y", "who painted …  again", "is it true that …") as questions about the person's own life, and a memory
that stands out was shown for them. The written "other" questions are 40 per language; these are built
from templates by KIND (a capital, who made a work, units, a difference, why, a myth, a word's meaning,
how-to, a year, a size, explain, sums, a translation, an opinion, a winner), with fillers and casual forms
written for this project from general knowledge (no evaluation set's sentence opened), seeded.

Gate rows only (``keep`` unknown: the keep classifier does not see them) and not "trusted" for choosing
thresholds (``calibrate.trusted``): a template's label is its kind's, and many easy rows would move the
own-question threshold the rates were set for.
"""

from __future__ import annotations

import random

from memory.head.corpus import SEED, Example

SOURCE = "world-template"
# Per language (``train --world``): about the written-template own questions' 150, twice.
PER_LANGUAGE = 300

_EN_KINDS: dict[str, tuple[list[str], list[str]]] = {
    "capital": (
        ["what's the capital of {x}", "what is the capital city of {x}", "capital of {x}?"],
        ["Canada", "Brazil", "Kenya", "Japan", "Turkey", "Egypt", "Peru", "Norway", "Vietnam", "Morocco"],
    ),
    "made": (
        ["who wrote {x}", "who painted {x}", "who invented {x}", "who directed {x}", "who discovered {x}"],
        [
            "the telephone",
            "war and peace",
            "the starry night",
            "penicillin",
            "jaws",
            "the lightbulb",
            "hamlet",
        ],
    ),
    "units": (
        ["how many {x}", "how many {x} are there", "how many {x} exactly"],
        [
            "inches in a foot",
            "ml in a teaspoon",
            "kilometres in a mile",
            "seconds in a day",
            "bones in the body",
        ],
    ),
    "difference": (
        ["what's the difference between {x}", "difference between {x}?", "is there a difference between {x}"],
        ["a frog and a toad", "weather and climate", "baking soda and baking powder", "a lake and a pond"],
    ),
    "why": (
        ["why do {x}", "why does {x}", "how come {x}"],
        [
            "cats purr",
            "onions make you cry",
            "the moon change shape",
            "leaves turn red",
            "we yawn",
            "ice float",
        ],
    ),
    "myth": (
        ["is it true that {x}", "is it true {x}", "is it a myth that {x}"],
        ["bulls hate red", "lightning never strikes twice", "bats are blind", "cracking knuckles hurts"],
    ),
    "meaning": (
        ["what does {x} mean", "what's the meaning of {x}", "define {x}", "what is {x} exactly"],
        ["ephemeral", "a haiku", "inflation", "deja vu", "a carbon footprint", "photosynthesis", "irony"],
    ),
    "howto": (
        ["how do you {x}", "how do i {x}", "what's the best way to {x}", "how to {x}"],
        ["tie a tie", "unclog a sink", "get a stain out of a shirt", "make rice fluffy", "stop a nosebleed"],
    ),
    "when": (
        ["what year did {x}", "when did {x}", "when was {x}"],
        [
            "the berlin wall fall",
            "world war one start",
            "the first iphone come out",
            "the eiffel tower built",
        ],
    ),
    "size": (
        ["how tall is {x}", "how far away is {x}", "how old is {x}", "how big is {x}", "how deep is {x}"],
        [
            "the sun",
            "mount fuji",
            "the pacific ocean",
            "the great wall",
            "mars",
            "the universe",
            "a blue whale",
        ],
    ),
    "explain": (
        ["explain {x} simply", "can you explain {x}", "explain {x} in two lines", "what even is {x}"],
        ["inflation", "blockchain", "gravity", "how vaccines work", "the stock market", "quantum physics"],
    ),
    "sums": (
        ["what's {x}", "whats {x}", "quick one, {x}?"],
        ["12 times 14", "20% of 350", "a third of 90", "144 divided by 12", "the square root of 81"],
    ),
    "translate": (
        ["how do you say {x}", "what's {x}", "translate {x}"],
        ["good night in french", "cheers in german", "good morning in japanese", "hello in korean"],
    ),
    "opinion": (
        ["what do you think about {x}", "is {x} worth it", "thoughts on {x}?", "which is better, {x}"],
        [
            "electric cars",
            "cats or dogs",
            "tea or coffee",
            "remote work",
            "social media",
            "the new star wars",
        ],
    ),
    "winner": (
        ["who won {x}", "who won {x} again", "did argentina win {x}", "who holds the record for {x}"],
        ["the world series", "the last olympics", "eurovision", "the 100 metres", "wimbledon this year"],
    ),
}
_EN_TAILS = ["", "", "", "?", "?", " tho", " again", " lol", " btw", ", just curious", ", settle a debate"]

_ZH_KINDS: dict[str, tuple[list[str], list[str]]] = {
    "capital": (
        ["{x}的首都是哪里", "{x}首都是哪个城市", "{x}的首都叫啥"],
        ["加拿大", "巴西", "肯尼亚", "日本", "土耳其", "埃及", "秘鲁", "挪威", "越南", "摩洛哥"],
    ),
    "made": (
        ["{x}是谁写的", "{x}是谁画的", "{x}是谁发明的", "{x}是谁导演的", "谁发现了{x}"],
        ["红楼梦", "清明上河图", "电话", "青霉素", "西游记", "星空", "指南针"],
    ),
    "units": (
        ["{x}", "{x}来着", "请问{x}"],
        ["一斤等于多少克", "一英里是多少公里", "一天有多少秒", "一亩地多少平方米", "人有多少块骨头"],
    ),
    "difference": (
        ["{x}有什么区别", "{x}有啥不一样", "{x}的区别是什么"],
        ["青蛙和蟾蜍", "天气和气候", "小苏打和泡打粉", "湖和池塘", "白糖和冰糖", "酱油和生抽"],
    ),
    "why": (
        ["为什么{x}", "{x}是为什么", "{x}的原因是啥"],
        ["猫会打呼噜", "切洋葱会流泪", "月亮有圆缺", "叶子秋天会变黄", "人会打哈欠", "冰会浮在水上"],
    ),
    "myth": (
        ["{x}是真的吗", "听说{x}，真的假的", "{x}是不是谣言"],
        ["牛看到红色会生气", "闪电不会打同一个地方两次", "蝙蝠是瞎子", "掰手指会得关节炎"],
    ),
    "meaning": (
        ["{x}是什么意思", "{x}啥意思", "解释一下{x}这个词", "{x}到底指什么"],
        ["内卷", "躺平", "通货膨胀", "光合作用", "碳足迹", "既视感", "破防"],
    ),
    "howto": (
        ["{x}怎么弄", "怎么{x}", "{x}有什么好办法", "{x}的方法"],
        ["打领带", "疏通下水道", "去掉衣服上的油渍", "煮米饭不粘锅", "止鼻血", "腌咸鸭蛋"],
    ),
    "when": (
        ["{x}是哪一年", "{x}是什么时候", "{x}是哪年的事"],
        ["柏林墙倒塌", "第一次世界大战爆发", "第一部iPhone发布", "埃菲尔铁塔建成", "唐朝建立"],
    ),
    "size": (
        ["{x}有多高", "{x}有多远", "{x}有多大", "{x}有多深", "{x}多少岁了"],
        ["太阳", "富士山", "太平洋", "长城", "火星", "宇宙", "泰山"],
    ),
    "explain": (
        ["给我解释一下{x}", "能讲讲{x}吗", "用简单的话说说{x}", "{x}到底是啥"],
        ["区块链", "万有引力", "疫苗的原理", "股市", "量子力学", "潮汐"],
    ),
    "sums": (
        ["{x}", "{x}？算一下", "帮我算算{x}"],
        ["12乘14等于多少", "350的20%是多少", "90的三分之一是多少", "144除以12", "81开根号"],
    ),
    "translate": (
        ["{x}", "{x}来着", "问一下{x}"],
        ["晚安用法语怎么说", "干杯用德语怎么说", "早上好用日语怎么说", "你好用韩语怎么说"],
    ),
    "opinion": (
        ["你觉得{x}怎么样", "{x}值得吗", "{x}哪个好", "你怎么看{x}"],
        ["电动车", "猫和狗", "茶和咖啡", "远程办公", "短视频", "新出的那部电影"],
    ),
    "winner": (
        ["{x}冠军是谁", "谁赢了{x}", "{x}谁拿了第一", "{x}的纪录是谁保持的"],
        ["世界杯", "上届奥运会乒乓球", "春晚小品评选", "百米赛跑", "今年的温网"],
    ),
}
_ZH_TAILS = ["", "", "", "？", "？", "啊", "呀", "来着", "呢", "哈", "，好奇问问"]


def world_questions(lang: str, n: int = PER_LANGUAGE, seed: int = SEED) -> list[str]:
    """``n`` distinct questions about the world in ``lang``: kinds taken in turn, a form and a filler drawn
    from each, a casual tail (English: lower case as typed in a chat, sometimes capitalised)."""
    kinds = _EN_KINDS if lang == "en" else _ZH_KINDS
    tails = _EN_TAILS if lang == "en" else _ZH_TAILS
    rng = random.Random(f"{seed}-world-{lang}")
    names = sorted(kinds)
    seen: dict[str, None] = {}
    for attempt in range(n * 20):
        if len(seen) >= n:
            break
        forms, fillers = kinds[names[attempt % len(names)]]
        text = rng.choice(forms).format(x=rng.choice(fillers))
        tail = rng.choice(tails)
        if text.endswith(("?", "？")):
            tail = ""
        text = (text.rstrip("?？") if tail else text) + tail
        if lang == "en" and rng.random() < 0.3:
            text = text[0].upper() + text[1:]
        seen.setdefault(text)
    return list(seen)


def world_examples(
    n: int = PER_LANGUAGE, seed: int = SEED, langs: tuple[str, ...] = ("en", "zh")
) -> list[Example]:
    """The world questions of ``langs`` as gate rows: "other", keep unknown."""
    return [
        Example(text, lang, f"{SOURCE}-{lang}", None, None, "other")
        for lang in langs
        for text in world_questions(lang, n, seed)
    ]
