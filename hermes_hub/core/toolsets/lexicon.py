"""Words as tool search compares them: light stems, and what people say mapped to what tools say.

    terms("remind me tomorrow morning to call the bank")  -> ['remind', 'tomorrow', 'morning', 'call', 'bank', ...]
    terms("查一下我下周的日程安排")                          -> ['下周', '日程', ..., 'calendar', 'event', 'week', ...]

Tool descriptions are written in English by developers ("List the events between start_date and
end_date"); people ask in their words and languages ("what's on my agenda next week", "查一下日程").
The small concept table below bridges the commonest gaps when no embedder is present; with one,
the semantic side does the rest.
"""

from __future__ import annotations

import re

from hermes_hub.infra.storage.terms import STOP_WORDS, tokens

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SPLIT_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[_\-./:]+")

# what people say -> what tool descriptions say (both sides are stemmed before use)
CONCEPTS: dict[str, str] = {
    # English everyday words
    "agenda": "calendar event schedule", "appointment": "calendar event", "meeting": "calendar event",
    "schedule": "calendar event", "busy": "calendar event", "free": "calendar event", "book": "create event",
    "plan": "calendar event", "diary": "calendar", "remind": "reminder", "nudge": "reminder",
    "alarm": "reminder", "forget": "reminder", "jot": "note", "write": "note create", "memo": "note",
    "notebook": "note", "look": "search find", "find": "search query", "lookup": "search query",
    "show": "list get", "what": "list query", "repo": "git repository", "commit": "git", "folder": "directory",
    "save": "write create", "delete": "remove delete", "erase": "delete", "clock": "time", "timezone": "time zone",
    "weather": "forecast", "remember": "memory", "recall": "memory search", "know": "memory recall",
    "readme": "read file", "open": "read", "say": "read", "big": "size", "large": "size",
    "changed": "modified info", "modified": "info", "plus": "sum", "total": "sum", "add": "sum",
    "healthy": "status state", "health": "status state", "running": "status state", "down": "status state",
    "conversation": "session history", "chat": "session history", "earlier": "history", "previous": "history",
    "relationship": "relation", "connect": "relation", "tool": "call", "repeat": "echo",
    # Chinese bigrams
    "日程": "calendar event schedule", "安排": "schedule event calendar", "日历": "calendar",
    "会议": "meeting event calendar", "开会": "meeting event calendar", "约会": "appointment event calendar",
    "预约": "appointment event create", "活动": "event", "行程": "calendar event schedule",
    "提醒": "reminder remind", "叫我": "reminder", "别忘": "reminder", "记得": "reminder",
    "笔记": "note", "记下": "note create", "记录": "note create", "备忘": "note reminder",
    "搜索": "search", "查找": "search find", "查一": "query search list", "找一": "search find",
    "列出": "list", "看看": "list show", "有哪": "list", "哪些": "list",
    "创建": "create", "新建": "create", "添加": "create add", "删除": "delete remove", "修改": "edit update",
    "文件": "file", "目录": "directory", "件夹": "directory", "读取": "read", "写入": "write",
    "时间": "time", "几点": "time", "时区": "timezone time", "现在": "current time",
    "下周": "week", "明天": "tomorrow", "今天": "today", "早上": "morning", "上午": "morning",
    "天气": "weather forecast", "记忆": "memory", "记住": "remember memory", "代码": "code",
    "仓库": "repository git", "提交": "commit git", "打电": "call phone", "电话": "call phone",
    "银行": "bank", "邮件": "email mail", "发送": "send", "正常": "status state", "服务": "server status",
    "对话": "session history", "聊天": "session history", "喜欢": "preference memory",
}

# The same bridge written the other way round, as a dictionary of the words tools use for common
# things: each line is tool-side words, then everyday English synonyms and the usual Chinese words
# for them. General vocabulary, not phrases from any query set; words as ambiguous as "all" (list
# them? delete them all?) are left out.
SYNONYMS: dict[str, str] = {
    # making, removing, changing
    "create": "new make start add 新建 创建 新增 建立 建一个",
    "delete": "remove erase clear purge discard trash drop 删 删掉 删除 去掉 清除 清空 移除",
    "edit modify replace": "change alter tweak fix correct update patch 改 修改 编辑 更改 替换 改成",
    "rename move": "renaming 重命名 改名 名字 更名",
    "move": "relocate transfer 移动 移到 挪 搬",
    "read file": "view display contents content 读 读取 打开 查看 内容 写了什么",
    "write file": "store 写 写入 保存 存 存成 存到",
    "list": "enumerate 列出 列表 清单",
    "search find": "locate seek where 找 查找 搜 搜索 查 查询 寻找 哪里 在哪",
    "compare multiple": "diff versus 对比 比较 比一比",
    "multiple": "both several many batch 多个 几个 两个 这些",
    "size": "bytes space disk biggest largest 大小 多大 空间 占用",
    "info metadata": "properties attributes permissions 属性 信息 权限 元数据",
    "directory": "folder folders dir 文件夹 目录 路径",
    "tree recursive structure": "nested 树 结构 层级 目录树",
    "allowed access": "permitted 允许 可以访问 访问",
    # numbers, text, media
    "sum": "plus add total calculate compute addition 加 加上 相加 求和 合计 总和 等于 计算 算",
    "echo repeat": "parrot 重复 复述 回显",
    "gzip compress": "zip shrink 压缩 打包",
    "environment variable": "envvars 环境变量 环境",
    "image media": "picture photo photos images audio 图片 照片 图像 截图 音频",
    # time
    "current time": "now clock 几点 现在 此刻 当前时间",
    "convert timezone": "conversion 换算 转换 时差 折算",
    "time": "时间 时刻",
    "date event schedule": "monday tuesday wednesday thursday friday saturday sunday weekend weekday tomorrow "
                           "tonight morning afternoon evening noon midnight 周一 周二 周三 周四 周五 周六 周日 "
                           "星期 礼拜 周末 明天 后天 今晚 上午 下午 晚上 早上 中午",
    # calendar, reminders, notes
    "calendar event": "meeting appointment agenda schedule 日历 日程 会议 开会 约会 活动 行程 安排",
    "reminder": "remind alert alarm notify notification 提醒 闹钟 叫我 别忘",
    "note": "notes memo jot notebook 笔记 记一下 记下 备忘 便签",
    # memory, conversations
    "memory remember": "memorize memorise remembering 记住 记得 记忆 记下来",
    "memory recall": "recollect 回忆 想起",
    "forget memory": "unlearn 忘记 忘掉 忘了",
    "restore": "unarchive recover 恢复 还原 找回",
    "history": "changelog 历史 变更 经过",
    "export": "download backup 导出 下载 备份",
    "import": "upload migrate 导入 迁移",
    "session": "chat conversation thread transcript 对话 会话 聊天 聊天记录",
    # the hub itself
    "status state": "health healthy alive online offline crashed 状态 正常 健康 在线 挂了 崩溃",
    "reload": "refresh reread 重新加载 重载 刷新 重启",
    "audit call tool": "usage 审计 调用 调用记录 工具",
    "feedback rating rate": "review upvote downvote 评价 好评 差评 评分 反馈 点赞",
    "trace run": "steps 运行记录 过程 步骤 执行",
    "agent task": "assistant delegate 助手 代理 任务 交给",
    "graph relation entity": "relationship relationships related 知识图谱 图谱 关系 实体 节点",
    "relation": "link linked associate 联系 关联",
    "history recall": "before previously earlier past ago 以前 之前 上次 过去 说过 提过 告诉过",
    "observation": "fact facts 事实 观察",
}

_SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "ied", "ed", "es", "s")
_ES_AFTER = ("s", "x", "z", "ch", "sh")  # "boxes" -> "box", but "preferences" -> "preference"


def stem(word: str) -> str:
    """A light English stem: "reminders" and "reminding" -> "remind"; CJK and short words as they are."""
    if len(word) <= 4 or _CJK_RE.match(word) or not word.isascii():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            base = word[: -len(suffix)]
            if suffix == "es" and not base.endswith(_ES_AFTER):
                base = word[:-1]
            if suffix in ("ies", "ied"):
                return base + "y"
            if len(base) > 4 and base[-1] == base[-2] and base[-1] not in "ls":  # "planned" -> "plan"
                base = base[:-1]
            return base
    return word


def raw_words(text: str) -> list[str]:
    """The content tokens of ``text`` unstemmed: identifiers split ("send_reminder" -> send, reminder),
    English stop words dropped, CJK as bigrams."""
    out = []
    for tok in tokens(_SPLIT_RE.sub(" ", text)):
        tok = tok.removesuffix("'s")  # "sister's name" is about a sister
        if tok not in STOP_WORDS and (len(tok) >= 2 or tok.isdigit() or _CJK_RE.match(tok)):
            out.append(tok)
    return out


def stop_words_meant(text: str) -> list[str]:
    """The stop words of ``text`` that still say what is wanted ("where is" asks to find); they are
    left out of matching but their concepts are not."""
    return [tok for tok in tokens(text) if tok in STOP_WORDS and tok in _CONCEPTS]


def words(text: str) -> list[str]:
    """The stemmed content tokens of ``text``."""
    return [stem(tok) for tok in raw_words(text)]


def human_name(name: str) -> str:
    """A tool name as words, unstemmed: "everything_get-tiny-image" -> "everything get tiny image"."""
    return " ".join(_SPLIT_RE.sub(" ", name).lower().split())


def _merged() -> dict[str, list[str]]:
    """CONCEPTS and SYNONYMS as one table: a person's word -> the tool-side words it stands for."""
    out: dict[str, list[str]] = {k: v.split() for k, v in CONCEPTS.items()}
    for tool_side, everyday in SYNONYMS.items():
        for word in everyday.split():
            have = out.setdefault(word, [])
            have += [w for w in tool_side.split() if w not in have]
    return out


_TABLE = _merged()
_CONCEPTS = {stem(k): [stem(w) for w in v] for k, v in _TABLE.items() if not _CJK_RE.match(k)}
# Chinese has no spaces: its concepts are found by longest match in the query's text (so "重新加载"
# is reload, not "加" = add), whatever their length
_CJK_CONCEPTS = {k: [stem(w) for w in v] for k, v in _TABLE.items() if _CJK_RE.match(k)}
_CJK_LONGEST = max(map(len, _CJK_CONCEPTS), default=0)
_CJK_RUN_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")


def cjk_concepts(text: str) -> list[str]:
    """The tool-side words of the Chinese (CJK) concepts in ``text``: at each character the longest
    concept starting there, unless a longer one found already covers it ("重新加载" is reload, not
    "加" = add; "文件夹" is a folder, not a file; "日程提醒" is both a schedule and a reminder)."""
    out: list[str] = []
    for run in _CJK_RUN_RE.findall(text):
        covered = 0  # end of the furthest concept found so far
        for i in range(len(run)):
            for n in range(min(_CJK_LONGEST, len(run) - i), 0, -1):
                if (hit := _CJK_CONCEPTS.get(run[i:i + n])) is not None:
                    if i + n > covered:
                        out += hit
                        covered = i + n
                    break
    return out


def everyday_words() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The table read the other way: a tool-side stem -> the everyday words (English and Chinese) for it;
    and each everyday word -> the tool-side stems it stands for, the one that says most first."""
    out: dict[str, list[str]] = {}
    for word, tool_side in _TABLE.items():
        for t in tool_side:
            out.setdefault(stem(t), []).append(word)
    return out, {word: list(dict.fromkeys(stem(t) for t in tool_side)) for word, tool_side in _TABLE.items()}


def is_cjk(word: str) -> bool:
    return bool(_CJK_RE.match(word))


def concept_keys() -> list[str]:
    """The English words the concept table knows (what a misspelt query word may have meant)."""
    return [k for k in _TABLE if not _CJK_RE.match(k)]


def expand(terms: list[str], text: str = "") -> list[str]:
    """``terms`` plus the tool-side words of the concepts they name, and of the Chinese concepts in
    ``text`` (each added once)."""
    seen = dict.fromkeys(terms)
    for t in [*terms, *stop_words_meant(text)]:
        for w in _CONCEPTS.get(t, ()):
            seen.setdefault(w, None)
    for w in cjk_concepts(text):
        seen.setdefault(w, None)
    return list(seen)
