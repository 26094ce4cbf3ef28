"""The word lists ``memory/head/people.py`` composes statements from (issue 35, round 5): relations, ages,
sums, pets, foods, places, plans, in the forms people type, Chinese first and English beside it. General
vocabulary, none of it taken from an evaluation set (memory/head/DATA_CARD.md, "Round 5")."""

from __future__ import annotations


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
