"""Statements about one's people and things, composed from parts (issue 35, round 5); Chinese first,
English beside it (``EN_KINDS``).

The persona corpora say what "I" am and like; they barely hold what a person says in a chat about the
people and things around them — a parent's age, a loan to a cousin, the cat's name, a food they cannot
stand said object-first, where the spare key is. The third blind set lost most of its Chinese tells of
these kinds, and the chit-chat the head learns "not kept" from (LCCC) is full of the same register. Each
statement here is a kind of fact (``KINDS``: a template per way of saying it, slots filled from general
word lists of relations, ages, sums, pets, foods, places — none taken from an evaluation set) in a chat
register (a lead, a particle, a moaning tail, with or without "我"); ``SMALL_TALK`` composes the other
side: remarks about the world, the weather, a show, the conversation itself, which say nothing lasting of
the speaker. Deterministic: the same seed gives the same sentences.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


def _words(text: str, sep: str | None = None) -> tuple[str, ...]:
    """A word list written as one string (space- or ``sep``-separated)."""
    return tuple(text.split(sep))


# Who a person talks about, in the forms people type (with and without "我", regional and older forms).
RELATIONS = _words(
    "我妈 老妈 我爸 老爸 老公 老婆 媳妇 我对象 男朋友 女朋友 我哥 我姐 我弟 我妹 闺女 儿子 "
    "我女儿 大儿子 小女儿 外婆 奶奶 爷爷 外公 姥姥 姥爷 婆婆 公公 岳父 丈母娘 老丈人 大舅 二姨 "
    "小姑 三叔 堂哥 表姐 表妹 表哥 侄女 外甥 孙子 孙女 外孙 老伴 室友 发小 闺蜜 老同学 师傅 "
    "我们领导 隔壁老王 楼下李阿姨 干妈 儿媳妇 女婿 亲家 大伯 姑父"
)
AGES = _words(
    "三岁 五岁半 八岁 十二 十六 二十三 三十一 四十五 五十八 六十二 六十七 七十一 七十六 八十 八十四 九十二"
)
CITIES = _words("成都 重庆 武汉 西安 青岛 厦门 昆明 长沙 郑州 南宁 合肥 太原 大连 温州 洛阳 珠海 兰州 贵阳")
JOBS = _words(
    "开出租 当老师 做会计 跑物流 开饭馆 当护士 修车 做装修 卖保险 当保安 做销售 开网店 "
    "在医院上班 在银行上班 在工地干活 在厂里上班 当公务员 做程序员 当司机 在超市上班"
)
ILLNESSES = _words(
    "高血压 糖尿病 哮喘 颈椎病 痛风 胃病 关节炎 心脏病 甲亢 腰椎间盘突出 老寒腿 慢性咽炎 过敏性鼻炎 失眠"
)
AMOUNTS = _words("三千 五千块 八百 一万 两万块 三万多 五万 一千五 六千 十万")
DEBTS = _words("花呗 信用卡 借呗 房贷 车贷 白条")
PETS = _words("猫 狗 橘猫 柯基 泰迪 金毛 鹦鹉 乌龟 仓鼠 兔子 柴犬 布偶猫 八哥 土狗")
PET_NAMES = _words("旺财 咪咪 可乐 球球 大白 小黑 煤球 元宝 馒头 花花 阿福 胖虎 芝麻 橙子")
FOODS = _words(
    "香菜 芹菜 苦瓜 榴莲 羊肉 肥肉 胡萝卜 茄子 折耳根 臭豆腐 韭菜 海带 内脏 生姜 大蒜 牛奶 咖啡 白酒"
)
LIKES = _words("火锅 烧烤 面条 饺子 酸菜鱼 小龙虾 麻辣烫 甜食 奶茶 绿茶 普洱 啤酒 辣椒 米粉 包子")
BRANDS = _words("华为 小米 苹果 OPPO 联想 戴尔 大众 丰田 比亚迪 美的 格力 耐克 安踏 李宁")
ITEMS = _words("备用钥匙 医保卡 户口本 房产证 护照 充电器 药箱 工具箱 存折 行李箱 老花镜 雨伞")
PLACES = _words("鞋柜里 抽屉里 衣柜顶上 床头柜里 车里 门口的花盆底下 电视柜下面 书房的柜子里 我妈那儿 邻居家")
WHEN_PAST = _words("去年 前年 上个月 上周 前几天 刚才 年初 小时候 大学那会儿 零九年 一五年 结婚那年")
WHEN_NEXT = _words("明年 下个月 年底 过完年 国庆 暑假 退休以后 等孩子大了 开春 下半年")
PLANS = _words(
    "换个大点的房子 去新疆自驾 考个会计证 把老房子装修一下 学游泳 换辆电车 回老家住一阵 "
    "带爸妈出去玩 戒烟 减肥二十斤 开个小店 去看看海 学开车 把牙整一整 报个老年大学"
)
HABITS = _words(
    "早上五点多就醒 饭后出去走一圈 睡前泡个脚 中午要睡一觉 每天喝两壶茶 周末去钓鱼 "
    "晚上去跳广场舞 早上去公园打太极 每天记账 一周去两次健身房 吃完饭就刷碗 每个月给家里打钱"
)
THINGS_OWNED = _words(
    "一辆二手的大众 一套两居室 一台老电脑 两辆电动车 一个小菜园 一间铺面 一台钢琴 一辆自行车 一块老手表"
)

_LEADS = ["", "", "", "", "对了，", "话说", "跟你说，", "哎，", "说起来，", "我跟你讲，", "嗯，"]
_TAILS = ["", "", "", "", "。", "呢", "哈", "啦", "了", "嘿嘿", "😂", "，愁死了", "，烦", "~", "哦", "呀"]


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of statement: its category (``memory/text/category.py``'s guide) and ways of saying it."""

    category: str
    templates: tuple[str, ...]


KINDS: tuple[Kind, ...] = (
    Kind(
        "event",
        (
            "{rel}{age}了",
            "{rel}今年{age}",
            "{rel}{age}了，身体还行",
            "{rel}在{city}{job}",
            "{rel}退休前是{job}的",
            "{rel}{job}好多年了",
            "{rel}有{ill}，一直在吃药",
            "{rel}{when_past}查出来{ill}",
            "{rel}{when_past}做了个手术",
            "{rel}住在{city}，一年回来一次",
            "{rel}{when_past}刚生了二胎",
            "{rel}明年高考",
            "{rel}刚上初一",
            "{rel}在{city}读大学",
            "{rel}跟我们一起住",
            "{rel}{when_past}走了",
            "跟{rel}好几年没来往了",
            "{rel}下个月结婚",
        ),
    ),
    Kind(
        "event",
        (
            "家里养了只{pet}，叫{pname}",
            "{pname}是只{pet}",
            "{pname}今年{age}了",
            "养了两只{pet}",
            "{pname}{when_past}生了一窝小的",
            "{pname}是{when_past}捡回来的",
            "{pname}一见生人就叫",
            "{pname}只吃{like}味的",
            "{pname}前阵子刚打了疫苗",
        ),
    ),
    Kind(
        "config",
        (
            "{rel}借了我{amt}",
            "{rel}借了我{amt}，还没还",
            "借给{rel}{amt}，说年底还",
            "还欠{rel}{amt}呢",
            "{debt}还欠着{amt}",
            "{debt}每个月还{amt}",
            "每个月给{rel}{amt}生活费",
            "工资一个月{amt}",
            "退休金一个月{amt}",
        ),
    ),
    Kind(
        "config",
        (
            "{food}我是真受不了",
            "{food}我一口都不吃",
            "{food}我从来不碰",
            "{food}是真吃不来",
            "不吃{food}，闻着就难受",
            "{like}我是真爱吃",
            "{like}我一个礼拜要吃三回",
            "每天都得来点{like}",
            "{like}我能天天吃",
            "对{food}过敏，一吃就起疹子",
            "喝{food}会拉肚子",
            "{ill}好几年了",
            "有{ill}，每天早上吃药",
            "{ill}，一变天就难受",
            "牙不好，硬的咬不动",
            "眼睛老花，看手机得戴眼镜",
            "耳朵有点背，说话得大声点",
        ),
    ),
    Kind(
        "config",
        (
            "{habit}",
            "每天{habit}",
            "习惯{habit}",
            "雷打不动{habit}",
            "这么多年都是{habit}",
        ),
    ),
    Kind(
        "config",
        (
            "{item}放在{place}",
            "{item}在{place}放着",
            "手机用的{brand}的",
            "家里的电视是{brand}的",
            "车是{brand}的，开了七八年了",
            "有{owned}",
            "家里有{owned}",
            "{owned}是{when_past}买的",
            "住六楼，没电梯",
            "房子是租的，一个月两千五",
            "住的老小区，楼下就是菜市场",
        ),
    ),
    Kind(
        "decision",
        (
            "{when_next}打算{plan}",
            "想{when_next}{plan}",
            "{when_next}准备{plan}",
            "在考虑{when_next}{plan}",
            "等{rel}放假了，想{plan}",
            "跟{rel}商量好了，{when_next}{plan}",
            "一直想{plan}，还没顾上",
        ),
    ),
    Kind(
        "event",
        (
            "{when_past}去了趟{city}",
            "{when_past}把{owned}卖了",
            "{when_past}搬到{city}来的",
            "{when_past}丢了钱包，证件都补办了",
            "{when_past}摔了一跤，腿现在还疼",
            "{when_past}刚换了工作",
            "{when_past}退休的",
            "{when_past}跟{rel}吵了一架，现在还没和好",
        ),
    ),
    Kind(
        "identity",
        (
            "老家{city}的",
            "在{city}住了三十年了",
            "以前{job}，现在退休了",
            "{job}的，干了二十多年",
            "今年{age}了",
            "属马的，六六年生的",
            "初中毕业就出来{job}了",
        ),
    ),
)

# What small talk says instead: the world, the weather, a show, the conversation — nothing of a life.
SMALL_TALK = (
    "今天这天气热死人了",
    "外面下大雨了",
    "这个电视剧越看越没意思",
    "{city}的房价又涨了",
    "现在的年轻人都不爱结婚了",
    "这球踢得太臭了",
    "菜价又涨了",
    "哈哈哈笑死我了",
    "你说的有道理",
    "那也没办法啊",
    "这事儿以后再说吧",
    "随便吧都行",
    "这个视频挺搞笑的",
    "{like}好像挺多人爱吃的",
    "听说{city}那边地震了",
    "{brand}又出新手机了",
    "今年冬天好冷啊",
    "这新闻是真的吗",
    "太离谱了吧",
    "我也是刚听说",
    "那个明星又上热搜了",
    "周末人肯定多",
    "你这话说的",
    "行吧行吧",
    "就这样吧，不说了",
    "好久没下雪了",
    "这个价格还挺划算",
    "堵车堵得要命",
    "这首歌挺好听的",
    "看着就好吃",
)


# English: the same kinds as typed in a message, the subject often left out.
EN_RELATIONS = _words(
    "my mum|mum|my dad|my husband|my wife|my partner|my boyfriend|my girlfriend|my brother|"
    "my sister|my son|my daughter|my eldest|the youngest|my nan|my grandad|my grandma|"
    "my father-in-law|my mother-in-law|my cousin|my nephew|my niece|my uncle|my aunt|my flatmate|"
    "my best mate|my boss|our neighbour|my stepdad|my granddaughter|my grandson|the wife|"
    "the missus|my other half",
    "|",
)
EN_AGES = _words("3|6|9|11|14|17|22|35|48|59|66|71|78|83|90", "|")
EN_JOBS = _words(
    "a plumber|a nurse|a teacher|a bus driver|a cleaner|an electrician|a dentist|a lorry driver|"
    "a chef|in IT|in retail|at the council|at the hospital|at a garage|on the railways|"
    "in a warehouse",
    "|",
)
EN_ILL = _words(
    "asthma|diabetes|high blood pressure|arthritis|a bad back|gout|angina|COPD|a dodgy knee|migraines",
    "|",
)
EN_AMOUNTS = _words("£200|£500|50 quid|£1,200|two grand|£300|$400|£80|£5k|£750", "|")
EN_PETS = _words(
    "dog|cat|springer spaniel|labrador|tabby|budgie|rabbit|tortoise|greyhound|border collie|guinea pig",
    "|",
)
EN_PET_NAMES = _words("Bramble|Monty|Pickle|Rufus|Tilly|Scamp|Noodle|Barney|Mabel|Ziggy|Poppy|Jasper", "|")
EN_FOODS = _words(
    "mushrooms|olives|liver|blue cheese|sprouts|spicy food|fish|tomatoes|peppers|marmite|lamb|coffee",
    "|",
)
EN_LIKES = _words(
    "a fry-up|curry|fish and chips|a pint of bitter|tea|porridge|pies|sushi|a roast|dark chocolate",
    "|",
)
EN_ITEMS = _words(
    "the spare key|my passport|the car keys|the insurance papers|my reading glasses|the first aid kit",
    "|",
)
EN_PLACES = _words(
    "under the mat|in the kitchen drawer|in the shed|on the hook by the door|in the glovebox|"
    "at my sister's|in the top drawer of the desk|behind the clock",
    "|",
)
EN_PAST = _words(
    "last year|in 2019|a couple of years back|last month|last week|when I was a kid|back in the 80s|in March",
    "|",
)
EN_NEXT = _words(
    "next year|in the spring|after christmas|this summer|once I retire|next month|in october", "|"
)
EN_PLANS = _words(
    "do the west highland way|get the bathroom redone|learn to drive|visit my brother in Perth|"
    "sell the caravan|take the grandkids to Disneyland|retrain as a plumber|pay off the car|"
    "get a dog",
    "|",
)
EN_HABITS = _words(
    "walk the dog at six|do the crossword every morning|go to the allotment on sundays|"
    "swim three mornings a week|have a bath every night|ring my mum on fridays|"
    "do the big shop on saturdays|go to bed by ten",
    "|",
)
EN_OWNED = _words(
    "an old Corsa|a caravan|a narrowboat|a motorbike|an allotment|a static caravan|a piano|an e-bike",
    "|",
)

EN_KINDS: tuple[Kind, ...] = (
    Kind(
        "event",
        (
            "{rel} is {age}",
            "{rel} turned {age} last month",
            "{rel} works as {job}",
            "{rel} used to be {job}",
            "{rel} has {ill}",
            "{rel} lives up in Glasgow",
            "{rel} had a hip op {when_past}",
            "{rel} passed away {when_past}",
            "{rel} starts uni in september",
            "haven't spoken to {rel} in years",
            "{rel} is getting married in june",
            "{rel}'s expecting again",
        ),
    ),
    Kind(
        "event",
        (
            "we've got a {pet} called {pname}",
            "{pname}'s a {pet}",
            "{pname} is {age} now",
            "{pname} only eats the chicken one",
            "{pname} hates the hoover",
            "got {pname} from the rescue {when_past}",
        ),
    ),
    Kind(
        "config",
        (
            "lent {rel} {amt}",
            "{rel} still owes me {amt}",
            "owe {rel} {amt}",
            "still paying off {amt} on the credit card",
            "rent's {amt} a month",
            "council tax comes out on the 1st",
            "can't stand {food}",
            "{food}, can't stand it",
            "never touch {food}",
            "{food} makes me ill",
            "allergic to {food}",
            "love {like}",
            "{like} every friday without fail",
            "got {ill}",
            "been on tablets for {ill} for years",
            "deaf in one ear so speak up",
            "{habit}",
            "always {habit}",
            "{item}'s {place}",
            "keep {item} {place}",
            "drive {owned}",
            "got {owned}",
            "phone's an old samsung",
            "bins go out on a wednesday",
        ),
    ),
    Kind(
        "decision",
        (
            "want to {plan} {when_next}",
            "thinking of trying to {plan}",
            "planning to {plan} {when_next}",
            "we're going to {plan} {when_next}",
            "hoping to {plan} before I'm 70",
            "booked in at the doctor's next tuesday",
        ),
    ),
    Kind(
        "event",
        (
            "went to Spain {when_past}",
            "sold {owned} {when_past}",
            "moved here {when_past}",
            "had a fall {when_past}, knee's still not right",
            "retired {when_past}",
            "fell out with {rel} {when_past}",
        ),
    ),
    Kind(
        "identity",
        (
            "I'm {age}",
            "was {job} for 30 years",
            "retired now, used to be {job}",
            "born and bred in Hull",
            "left school at 16",
            "been in this house since 1988",
        ),
    ),
)

EN_SMALL_TALK = (
    "terrible weather today",
    "did you see the match last night",
    "prices in the shops are shocking",
    "that programme's gone downhill",
    "the trains are a nightmare again",
    "funny how things turn out",
    "can't argue with that",
    "fair enough",
    "ha that's brilliant",
    "they say it'll snow next week",
    "everyone's got a phone glued to their hand these days",
    "not sure about that one",
    "that's the way it goes",
    "the news is depressing",
    "they're digging up the road again",
)

_EN_LEADS = ["", "", "", "", "oh and ", "btw ", "also ", "fyi ", "well ", "ok so "]
_EN_TAILS = ["", "", "", "", ".", " lol", " haha", "!", " tbh", " mind", " to be fair", " 😂"]


def _fill(template: str, rng: random.Random) -> str:
    slots = {
        "rel": RELATIONS,
        "age": AGES,
        "city": CITIES,
        "job": JOBS,
        "ill": ILLNESSES,
        "amt": AMOUNTS,
        "debt": DEBTS,
        "pet": PETS,
        "pname": PET_NAMES,
        "food": FOODS,
        "like": LIKES,
        "brand": BRANDS,
        "item": ITEMS,
        "place": PLACES,
        "when_past": WHEN_PAST,
        "when_next": WHEN_NEXT,
        "plan": PLANS,
        "habit": HABITS,
        "owned": THINGS_OWNED,
    }
    return template.format(**{name: rng.choice(words) for name, words in slots.items()})


def _fill_en(template: str, rng: random.Random) -> str:
    slots = {
        "rel": EN_RELATIONS,
        "age": EN_AGES,
        "job": EN_JOBS,
        "ill": EN_ILL,
        "amt": EN_AMOUNTS,
        "pet": EN_PETS,
        "pname": EN_PET_NAMES,
        "food": EN_FOODS,
        "like": EN_LIKES,
        "item": EN_ITEMS,
        "place": EN_PLACES,
        "when_past": EN_PAST,
        "when_next": EN_NEXT,
        "plan": EN_PLANS,
        "habit": EN_HABITS,
        "owned": EN_OWNED,
    }
    return template.format(**{name: rng.choice(words) for name, words in slots.items()})


def _typed(text: str, lang: str, rng: random.Random) -> str:
    """As typed in a chat: a lead and a tail (a particle, a laugh, a moan)."""
    if lang == "en":
        return (rng.choice(_EN_LEADS) + text + rng.choice(_EN_TAILS)).strip()
    tail = rng.choice(_TAILS)
    if tail in ("了",) and text.endswith("了"):
        tail = ""
    return rng.choice(_LEADS) + text + tail


def statements(per_template: int = 3, lang: str = "zh") -> list[tuple[str, str]]:
    """(text, category) of every kind of ``lang``, ``per_template`` sentences per template,
    deterministic."""
    rng = random.Random(f"people-{lang}")
    fill = _fill if lang == "zh" else _fill_en
    out: dict[str, str] = {}
    for kind in KINDS if lang == "zh" else EN_KINDS:
        for template in kind.templates:
            for _ in range(per_template):
                out.setdefault(_typed(fill(template, rng), lang, rng), kind.category)
    return list(out.items())


def small_talk(per_template: int = 3, lang: str = "zh") -> list[str]:
    """Chit-chat in the same register, saying nothing lasting of the speaker."""
    rng = random.Random(f"people-{lang}-small-talk")
    fill, lines = (_fill, SMALL_TALK) if lang == "zh" else (_fill_en, EN_SMALL_TALK)
    return list(dict.fromkeys(_typed(fill(t, rng), lang, rng) for t in lines for _ in range(per_template)))
