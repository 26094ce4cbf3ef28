"""The offline rules for everyday life in Chinese: first-person statements about people, pets, health,
work, home and possessions, education, dates, routines and plans ("我女儿叫小雨", "我每周三晚上去打羽毛球",
"我打算明年考研"); ``everyday_rules.py`` holds the English forms and the same design: a form alone keeps
nothing, the sentence must also name an everyday class (``memory/text/category.py``), which files it where it
does not fade. The rules see the normalised sentence of ``quick_extract.py``."""

from __future__ import annotations

import re

from memory.model.everyday_match import MANNER_CLASSES, OCCUPATION, PLAN, class_of, match_for, whole
from memory.model.quick_rules import Match, Rules
from memory.text.category import everyday_class

_ZH_POSSESSOR = (
    r"^(?:我们|咱们|我|咱)(?:家的?|们家的?|的)?(?:最好的|最要好的|好|大|小|二|三|亲|前|现在的|新)?"
    r"(?![在是有去要想不没很也都就还又会能可刚已正把被给跟和对从到用开骑学读上教带戴考拿毕弹拉练每今明昨前这那一]|后(?!妈|爸))"
)
_ZH_CHATTER = re.compile(
    r"说(?!话)|觉得|认为|问我|让我|骂|催|唠叨|吵架|生气|开心|难过|哭了|笑死|气死|烦死|无聊|快没|没电|坏了|丢了|找不到|不见了"
)
_ZH_FUTURE = (
    r"明天|后天|下周[一二三四五六日天]|下周|下个?星期|下个?礼拜|下个?月|下半年|明年|年底|月底|月初|周[一二三四五六日天]|星期[一二三四五六日天]|"
    r"\d+[号日月点]|[一二三四五六七八九十]+[月号日点]|国庆|春节|元旦|五一|中秋|端午|清明|寒假|暑假"
)
_ZH_WHEN = (
    rf"{_ZH_FUTURE}|以后|将来|未来|今年|年内|早日|尽快|有一天|这辈子|退休后"
    r"|(?:\d+|[一二三四五六七八九十]+)岁(?:之前|以前|前|之后|以后)?"
)
_ZH_LIFE_GOAL = (
    r"学会|学|考|成为|存钱|攒钱|买房|买车|留学|创业|移民|转行|跑马拉松|减肥|戒烟|戒酒|环游|出国|种|报名"
)
_ZH_GOAL = (
    r"学|考|成为|存钱|攒钱|买|换|搬|减|戒|申请|读|留学|创业|移民|跑|养|生|结婚|旅游|旅行|环游|拿到|通过|"
    r"升职|转行|开一家|开个|写一本|出版"
)


def _zh_possessed(m: re.Match[str]) -> Match | None:
    """ "我女儿叫小雨", "我家的狗叫旺财", "我们的结婚纪念日是…": an everyday noun right after the
    possessor, then something said about it (not what that person said or felt)."""
    said = m.string[m.start("head") :]
    found = everyday_class(m.group("head"))
    exclaimed = m.string.endswith(("啊", "呀", "哦", "吧", "嘛", "啦"))  # "我腰好酸啊": a passing complaint
    if len(said) < 3 or exclaimed or _ZH_CHATTER.search(m.string) or found in MANNER_CLASSES:
        return None
    return match_for(found)


_ZH_STORE = re.compile(r"箱|柜|抽屉|床底|盒|袋|架|门后|门口|墙上|保险")


def _zh_kept_in(m: re.Match[str]) -> Match | None:
    """ "钥匙挂在门口", "被子收在床底的收纳箱里": a thing of the household and where it is kept, told by
    its class, by a verb of putting away (收/藏/锁/贴), or by a place of storage — not "书放在桌上" (just
    lying there)."""
    stored = m.group("verb") != "放在" or _ZH_STORE.search(m.group("place"))
    return match_for(everyday_class(m.group("noun")) or ("home" if stored else None))


def _zh_wish(m: re.Match[str]) -> Match | None:
    """ "我想明年去日本", "我今年想把身体练好": a wish with a time named anywhere is a plan ("我想睡觉"
    is not)."""
    return PLAN if re.search(_ZH_WHEN, m.string) else None


EVERYDAY_ZH: Rules = [
    (re.compile(_ZH_POSSESSOR + r"(?P<head>[\u4e00-\u9fff]{1,4})"), _zh_possessed),
    # "我和我老公结婚十年了", "我跟女朋友在一起三年了".
    (
        re.compile(r"^我(?:和|跟)(?:我的?)?(?P<rest>[^，,]{1,4}?)(?:结婚|在一起|认识|交往|恋爱|离婚|订婚)"),
        class_of("rest"),
    ),
    # "小雨是我女儿", "旺财是我们家的狗".
    (re.compile(r"^[^，,。]{1,8}?是(?:我|我们|咱们)(?:家)?的?(?P<rest>.+)$"), class_of("rest")),
    # Where things are kept: "家里的备用钥匙在鞋柜里", "车钥匙挂在门口", "我把护照放在抽屉里".
    (
        re.compile(r"^(?P<noun>[^，,我]{1,6}?)(?P<verb>放在|收在|藏在|挂在|停在|锁在|贴在)(?P<place>.+)$"),
        _zh_kept_in,
    ),
    (
        re.compile(
            r"^(?:家里的?|我家的?|我们家的?)(?P<noun>[^，,]{1,8}?)(?:放在|收在|藏在|挂在|停在|贴在|在|从|由|每|是)"
        ),
        class_of("noun", "home"),
    ),
    (
        re.compile(
            r"^我(?:一般|平时|都|总是|通常)*把(?P<noun>[^，,]{1,10}?)(?:放在|收在|藏在|挂在|停在|锁在)"
        ),
        class_of("noun", "home"),
    ),
    # "我家有一只叫咪咪的猫", "我们家里养了两条狗".
    (re.compile(r"^我(?:们)?家里?(?:有|养了?)(?P<rest>.+)$"), class_of("rest")),
    (re.compile(r"^(?:我们?|咱们?)家(?:里)?是(?P<rest>.+)$"), class_of("rest", "home")),
    # "我在一家外企做财务": a job at a kind of workplace.
    (
        re.compile(
            r"^我(?:现在|目前|一直)?在(?:一家|家|一所|所)?[^，,]{0,10}?(?:公司|外企|国企|央企|企业|厂|医院|学校|"
            r"大学|银行|店|馆|机构|单位|部门|集团|工作室|事务所)(?:做|当|干|任|负责)(?P<rest>.{1,12})$"
        ),
        lambda _m: OCCUPATION,
    ),
    # Health without a measure word: "我有高血压", "我乳糖不耐受", "我确诊了哮喘".
    (
        re.compile(r"^我(?:有|得了|患有|患了|确诊了?|查出了?)(?P<rest>.+)$"),
        class_of("rest"),
    ),
    (
        re.compile(r"^我.{0,6}(?:不耐受|过敏|近视|色盲|怀孕了?|吃素|素食|糖尿病|高血压|哮喘|痛风)"),
        whole("health"),
    ),
    # Owning, driving, using, studying: "我开一辆白色的本田", "我用的是华为手机", "我是北大毕业的".
    (re.compile(r"^我(?:现在|平时|一直)?(?:开|骑)(?:着|的是)?(?:一|两)?(?:辆|台)"), whole("home")),
    (
        re.compile(
            r"^我(?:们)?(?:现在|平时|一直|目前|\d{2,4}年|去年|前年|以前|小时候|正在|在网上|还|也|又|冬天|夏天)*"
            r"(?P<verb>用的是|用的|养了?|是|学的是|补|服用|"
            r"学的|学|读的是|读|在读|在学|在考|在上|上|教|带|戴|考了?|拿到了?|毕业于|会|弹|拉|练|在吃|吃)(?P<rest>.+)$"
        ),
        class_of("rest"),
    ),
    (re.compile(r"^我是(?:做|搞|干)(?P<rest>.{1,8})的$"), lambda _m: OCCUPATION),
    # How one gets to work or school: "我骑电动车上班", "我每天坐公交上学".
    (
        re.compile(r"^我(?:们)?(?:每天|平时|一般)?(?:坐|骑|开车|走路|打车|乘)[^，,]{0,6}?(?:上班|上学|通勤)"),
        whole(),
    ),
    # Where one studied: "我在南京大学读的书", "我是在县城上的高中".
    (re.compile(r"^我(?:是)?在[^，,]{2,10}?(?:读的|上的|念的|毕业)"), whole("education")),
    # Fears: "我怕坐飞机", "我害怕打针".
    (re.compile(r"^我(?:很|特别|超|有点)?(?:怕|害怕)(?![你他她它了])[\u4e00-\u9fff]{2,}$"), whole("tastes")),
    (re.compile(r"^我(?:会说|会讲|能说|说得一口|讲得一口|会一点)"), lambda _m: match_for("education")),
    # Tastes by degree and new tastes: "我不太喜欢吃甜的", "我特别怕冷", "我迷上了钓鱼", "我宁可坐火车".
    (
        re.compile(
            r"^我(?:最近|这几年|一直)?(?:迷上了?|爱上了?|喜欢上了?|入坑了?|宁愿|宁可|更喜欢|比较喜欢|更愿意|偏爱)"
        ),
        whole("tastes"),
    ),
    # Caring for someone: "我在照顾我爸".
    (
        re.compile(r"^我(?:一直|现在)?(?:在|正在)?(?:照顾|照看|陪护)(?P<rest>.+)$"),
        class_of("rest", "people"),
    ),
    # An age and what happened then: "我十八岁就出来工作了".
    (re.compile(r"^我(?:\d+|[一二三四五六七八九十]+)岁(?:就|时|的时候|那年)"), whole()),
    (
        re.compile(
            r"^我(?:不太|不怎么|不是很|不大|挺|蛮|超|特别|非常|很|最|一直|从小就?)(?:喜欢|爱|讨厌|怕|受不了)"
        ),
        whole("tastes"),
    ),
    # Learning and exams: "我正在学日语", "我数学考过满分", "我读研的时候…", "我2010年高中毕业".
    (
        re.compile(r"^我(?:正在|在)?(?:网上|业余|自己)?(?:学|自学)[a-z\u4e00-\u9fff]"),
        lambda _m: match_for("education"),
    ),
    (
        re.compile(r"^我[^，,]{0,6}?(?:过了|考了|考过|学过|考上了?|考取了?|拿了)[^，,]{1,12}$"),
        whole("education"),
    ),
    (
        re.compile(
            r"^我(?:们)?(?:\d{2,4}年|大[一二三四]|研[一二三]|高[一二三]|初[一二三]|读书|上学|读研|读大学)"
            r"(?:的时候|那年)?(?P<rest>.+)$"
        ),
        class_of("rest", "education"),
    ),
    # Holding back for health: "我在控糖", "我一直在戒糖".
    (re.compile(r"^我(?:一直|最近)?(?:在|正在)(?:控|戒|忌|少吃|调理|吃药)"), lambda _m: match_for("health")),
    # Places one goes to: "我们常去的菜市场是…", "我常看的牙医姓刘".
    (re.compile(r"^我(?:们)?(?:常去|常用|常看|常找|平时去|一直去)的(?P<rest>.+)$"), class_of("rest")),
    # Days and times: "我周末弹钢琴", "我每周三晚上去打羽毛球", "每周六我都去游泳".
    (
        re.compile(r"^(?:每天|每日|每晚|每个?周.?|每个?星期.?|每个?礼拜.?|每个?月|每年|周末)[^，,]{0,6}?我"),
        whole("routines"),
    ),
    (
        re.compile(
            r"^我(?:们)?[^，,]{0,6}?(?:下班后|下班以后|上班前|睡前|饭后|午饭后|早饭前|放学后|每天|每日|每晚|每早|每周|每星期|每个?礼拜|每个?月|每年|每逢|周末|工作日|"
            r"周[一二三四五六日天]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|\d+点|[一二三四五六七八九十]+点)"
            r"(?!说|想)"
        ),
        whole("routines"),
    ),
    # Plans, goals and appointments: "我打算明年考研", "我想今年学会游泳", "我下周二要去看牙医".
    (
        re.compile(
            rf"^我(?:们)?(?:{_ZH_WHEN})*(?:真的|一直|很)?(?:打算|计划|准备|决定|梦想)(?:能|在)?(?:{_ZH_WHEN})*"
            rf"(?:{_ZH_GOAL})"
        ),
        lambda _m: PLAN,
    ),
    (
        re.compile(
            rf"^我(?:们)?(?:{_ZH_WHEN})*(?:真的|一直|很)?(?:想要?|希望)(?:能|在[^，,]{{1,6}}?)?(?:(?:{_ZH_WHEN})+.{{0,4}}?(?:{_ZH_GOAL})|"
            rf"(?:{_ZH_LIFE_GOAL}))"
        ),
        lambda _m: PLAN,
    ),
    (
        re.compile(rf"^我(?:们)?(?:{_ZH_FUTURE})+.{{0,4}}?(?:要|得|会|约了|预约了?|安排了|有)"),
        lambda _m: PLAN,
    ),
    (re.compile(rf"^我(?:们)?(?:要|得|约了|预约了?)[^，,]{{0,6}}?(?:{_ZH_FUTURE})"), lambda _m: PLAN),
    (
        re.compile(rf"^(?:{_ZH_FUTURE}|上午|下午|晚上|早上|中午)+我(?:们)?(?:要|得|会|约了|预约了?)"),
        lambda _m: PLAN,
    ),
    (re.compile(rf"^我(?:们)?(?:{_ZH_WHEN})*(?:很|一直|真的)?(?:想|想要|希望)"), _zh_wish),
    (
        re.compile(r"^我(?:们)?(?:在|正在|一直在)(?:为[^，,]{1,6}?)?(?:攒钱|存钱|备孕|装修|找房|看房|备考)"),
        lambda _m: PLAN,
    ),
    (re.compile(r"^我(?:们)?[^，,]{0,4}的(?:目标|梦想|愿望|计划|新年愿望)是"), lambda _m: PLAN),
    # Tastes the older table misses: "我对摄影很感兴趣", "我是周杰伦的歌迷".
    (
        re.compile(r"^我对(?P<obj>.+?)(?:很|特别|非常|超级?|比较|不|没|有)*(?:感兴趣|兴趣|着迷|上瘾)"),
        whole("tastes"),
    ),
    (re.compile(r"^我是(?:个|一个)?.{1,10}(?:迷|粉|粉丝|控)$"), whole("tastes")),
]
