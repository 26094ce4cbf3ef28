"""Hand-written probes and hand labels of the dedup-threshold benchmark: pairs that must never merge,
restatements that may, and which sampled pairs are the same fact (bench/README.md, "Dedup threshold")."""

from __future__ import annotations

# Minimal pairs: two different facts that differ only in a number, date, name, role or negation.
CONTRAST_PROBES: tuple[tuple[str, str, str], ...] = (
    ("date", "Caroline went to an LGBTQ support group on 7 May 2023.",
     "Caroline went to an LGBTQ support group on 2 June 2023."),
    ("date", "Melanie ran a charity race last Saturday.", "Melanie ran a charity race last Sunday."),
    ("date", "Jon is opening his dance studio next month.", "Jon opened his dance studio last month."),
    ("number", "Audrey has four dogs.", "Audrey has two dogs."),
    ("number", "Tim has read 12 fantasy novels this year.", "Tim has read 30 fantasy novels this year."),
    ("number", "Nate won first place in the gaming tournament.",
     "Nate won third place in the gaming tournament."),
    ("name", "Caroline's best friend is Melanie.", "Caroline's best friend is Jessica."),
    ("name", "Gina moved to Chicago for work.", "Gina moved to Boston for work."),
    ("role", "Sam appreciates Evan's support.", "Evan appreciates Sam's support."),
    ("negation", "John likes spicy food.", "John does not like spicy food."),
    ("negation", "Maria has been to Japan.", "Maria has never been to Japan."),
    ("people", "Deborah visits her mother every Sunday.", "Deborah visits her sister every Sunday."),
    ("date", "Lisa 在2023年5月7日参加了绘画比赛。", "Lisa 在2023年6月2日参加了绘画比赛。"),
    ("number", "Bart在运动会上获得了第一名。", "Bart在运动会上获得了第六名。"),
    ("number", "Lisa养了两只猫。", "Lisa养了三只猫。"),
    ("name", "Lisa的好朋友是Sophia。", "Lisa的好朋友是Emma。"),
    ("people", "Bart和妈妈一起去游乐园。", "Bart和爸爸一起去游乐园。"),
    ("negation", "Bart喜欢吃青菜。", "Bart不喜欢吃青菜。"),
    ("negation", "Lisa参加了学校的绘画比赛。", "Lisa没有参加学校的绘画比赛。"),
    ("date", "Lisa上周去了动物园。", "Lisa下周去动物园。"),
)  # fmt: skip


# The other side: short restatements of one fact, where a merge is wanted.
RESTATEMENT_PROBES: tuple[tuple[str, str, str], ...] = (
    ("en", "The user likes coffee.", "The user loves drinking coffee."),
    ("en", "The user works in Berlin as a software engineer.",
     "The user is a software engineer based in Berlin."),
    ("en", "The user is allergic to peanuts.", "The user has a peanut allergy."),
    ("zh", "用户喜欢喝咖啡。", "用户爱喝咖啡。"),
    ("zh", "用户在北京工作，是一名软件工程师。", "用户是软件工程师，在北京上班。"),
    ("zh", "用户对花生过敏。", "用户吃花生会过敏。"),
    ("zh", "Lisa在学校的绘画比赛中获得第一名，感到非常开心。", "Lisa在学校绘画比赛拿了第一名，非常高兴。"),
    ("zh", "Bart养了一只小乌龟，觉得它很可爱。", "Bart家里有一只可爱的小乌龟。"),
)  # fmt: skip


# Hand labels: True = the two memories restate the same fact (merging loses nothing that matters), False =
# different facts (another event, object, time, person or role; or one adds a fact the other lacks; the
# engine's merge keeps only the older row's text). Keys: "dataset/owner/id_a|id_b", ids in file order.
# Pairs were drawn with --label-sample (seeded) across the cosine bands; see bench/README.md.
_LABELLED_SAME = {
    "locomo10": """
        conv-30/D4:11#1|D11:7#0 conv-41/D19:16#0|D31:17#0 conv-49/D3:3#0|D4:6#0 conv-48/D16:10#0|D22:16#0
        conv-42/D8:11#0|D29:8#0 conv-42/D12:11#0|D13:21#0 conv-30/D1:4#0|D13:3#0 conv-42/D8:4#0|D11:3#0
        conv-41/D7:3#0|D8:21#0 conv-44/D14:14#0|D24:4#0 conv-43/D13:14#0|D25:16#0 conv-30/D4:6#0|D13:22#0
        conv-49/D7:14#0|D16:7#0 conv-49/D7:10#0|D7:15#0 conv-44/D11:7#0|D12:5#0 conv-49/D7:16#0|D12:7#0
        conv-30/D4:6#0|D4:6#2 conv-49/D7:14#0|D7:16#0 conv-44/D10:7#0|D19:12#0 conv-42/D13:22#0|D26:5#1
        conv-50/D18:4#0|D26:7#0 conv-49/D10:13#0|D10:14#0 conv-47/D17:10#0|D17:10#1 conv-42/D14:3#0|D18:7#1
        conv-43/D2:18#0|D25:16#0 conv-42/D18:7#1|D26:5#1 conv-42/D13:22#0|D18:7#1 conv-49/D7:14#0|D12:7#0
        conv-41/D12:2#0|D22:2#0 conv-42/D14:3#0|D26:5#1 conv-30/D4:11#1|D5:2#0 conv-49/D7:16#0|D15:17#0
        conv-43/D2:18#0|D13:14#0 conv-49/D7:14#0|D15:17#0 conv-42/D13:22#0|D14:3#0
    """,
}


_LABELLED_DIFFERENT = {
    "locomo10": """
        conv-41/D15:13#0|D32:7#0 conv-48/D8:18#0|D20:2#0 conv-48/D3:11#0|D14:2#0 conv-44/D2:13#0|D22:8#0
        conv-44/D6:6#0|D20:15#0 conv-41/D11:12#0|D13:36#0 conv-44/D8:14#0|D19:6#0 conv-47/D17:5#0|D28:16#0
        conv-41/D6:12#0|D26:2#0 conv-41/D12:1#0|D12:9#0 conv-44/D7:8#0|D9:20#0 conv-26/D4:11#0|D11:8#0
        conv-49/D2:3#0|D16:17#0 conv-44/D15:5#0|D23:24#0 conv-42/D7:10#0|D15:14#0 conv-41/D9:8#0|D22:7#0
        conv-44/D24:4#0|D27:14#0 conv-42/D11:15#0|D25:10#2 conv-41/D4:12#0|D12:1#0 conv-49/D17:11#0|D20:12#0
        conv-41/D22:2#0|D30:21#0 conv-48/D27:8#0|D28:9#0 conv-48/D5:12#0|D13:2#0 conv-41/D9:18#0|D23:7#1
        conv-50/D5:10#1|D26:7#0 conv-48/D5:4#0|D16:9#0 conv-48/D27:3#0|D27:3#1 conv-49/D4:7#0|D6:6#1
        conv-50/D8:3#0|D16:24#0 conv-43/D14:3#0|D14:11#0 conv-41/D19:13#0|D23:3#1 conv-48/D13:14#0|D16:10#0
        conv-50/D11:10#0|D18:5#1 conv-47/D22:9#0|D28:3#1 conv-41/D3:12#0|D19:21#0 conv-42/D16:15#0|D18:7#1
        conv-49/D17:6#0|D23:5#0 conv-50/D18:5#0|D18:5#1 conv-30/D4:5#0|D10:1#1 conv-41/D9:12#0|D22:3#0
        conv-30/D2:11#0|D10:10#0 conv-48/D2:7#0|D22:2#0 conv-44/D11:2#0|D14:14#0 conv-41/D9:14#0|D23:7#1
        conv-48/D3:11#0|D19:2#1 conv-44/D4:17#0|D23:24#0 conv-50/D4:4#0|D12:15#0 conv-44/D26:21#0|D26:22#0
        conv-26/D12:13#0|D12:14#0 conv-44/D11:7#0|D20:2#0 conv-49/D16:7#0|D18:11#0 conv-44/D12:13#0|D12:13#1
        conv-49/D7:14#0|D18:11#0 conv-41/D6:17#0|D6:18#0 conv-49/D15:17#0|D18:11#0
    """,
    "madial-zh": """
        madial-user-2/85|153 madial-user-2/50|101 madial-user-2/132|163 madial-user-2/21|98
        madial-user-1/17|57 madial-user-2/73|162 madial-user-2/16|153 madial-user-2/47|132
        madial-user-1/61|147 madial-user-2/77|90 madial-user-2/70|98 madial-user-1/160|169
        madial-user-2/13|21 madial-user-1/49|100 madial-user-2/34|151 madial-user-2/65|163
        madial-user-1/39|99 madial-user-2/14|62 madial-user-1/25|103 madial-user-2/21|132
        madial-user-2/77|101 madial-user-1/54|99 madial-user-1/27|38 madial-user-2/152|162
        madial-user-2/26|123 madial-user-1/32|71 madial-user-1/28|140 madial-user-1/75|106
        madial-user-2/90|162 madial-user-1/22|42 madial-user-2/23|24 madial-user-2/47|162
        madial-user-2/47|163 madial-user-1/8|39 madial-user-1/44|71 madial-user-2/24|31 madial-user-2/16|33
        madial-user-2/33|96 madial-user-2/2|96
    """,
    "madial-en": """
        madial-user-1/36|69 madial-user-2/16|96 madial-user-1/44|71 madial-user-2/33|96 madial-user-2/2|96
        madial-user-2/16|33
    """,
}


LABELS: dict[str, bool] = {
    f"{name}/{key}": same
    for same, table in ((True, _LABELLED_SAME), (False, _LABELLED_DIFFERENT))
    for name, keys in table.items()
    for key in keys.split()
}
