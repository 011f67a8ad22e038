"""Seeded generator of realistic vaults (Chinese/English mix), written straight to files.

Each note: front matter like Cairn's, 5-25 observations, 2-6 relations to other notes, about
1.5 KB. Words are drawn on a Zipf-like curve from 300 real words (150 Chinese, 150 English). That
vocabulary is far smaller than a real vault's (Heaps' law gives about 40,000 distinct words for
10,000 notes of this length), so every word is common: at 10,000 notes the median query term is
in a fifth of the notes, and the median query matches 40 % of them, all of which FTS5 scores.
The vaults are a hard case for search latency and an easy one for index size (few distinct
terms, text that compresses well).
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from pathlib import Path


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


ZH_WORDS = _words(
    "数据结构 线性代数 操作系统 作业 截止 考试 项目 会议 周报 需求 设计 接口 测试 部署 服务器 数据库 索引 "
    "缓存 日志 监控 报警 用户 权限 配置 版本 发布 回滚 性能 延迟 吞吐 内存 磁盘 网络 带宽 备份 迁移 文档 "
    "评审 代码 重构 模块 组件 前端 后端 移动端 小程序 支付 订单 库存 物流 客服 反馈 问卷 统计 报表 预算 "
    "合同 发票 报销 出差 机票 酒店 高铁 签证 护照 行程 杭州 上海 北京 成都 深圳 广州 西安 南京 武汉 "
    "老师 同学 室友 导师 师姐 同事 经理 客户 供应商 家人 朋友 邻居 生日 礼物 聚餐 火锅 咖啡 奶茶 "
    "羽毛球 篮球 跑步 游泳 徒步 电影 音乐 小说 课程 讲座 论文 实验 模型 训练 推理 分词 检索 排序 "
    "推荐 搜索 标签 分类 笔记 提醒 日程 周末 假期 计划 目标 复盘 习惯 偏好 喜欢 讨厌 习题 复习 预习"
)
EN_WORDS = _words(
    "python rust golang java typescript react vue docker kubernetes nginx redis postgres sqlite "
    "mysql kafka grpc http api sdk cli git github gitlab ci pipeline build release deploy rollback "
    "latency cache index query schema migration backup metrics alert dashboard grafana prometheus "
    "linux macos windows ssh vpn dns tls oauth token session cookie browser mobile android ios "
    "pytorch numpy pandas jupyter notebook model training inference embedding tokenizer bm25 "
    "search ranking recall precision benchmark profiling memory thread async queue worker cron "
    "meeting review design roadmap sprint backlog ticket bug issue feature refactor test coverage "
    "lint format vscode vim emacs obsidian notion slack email calendar deadline budget invoice"
)
CATEGORIES = _words("fact decision todo idea preference deadline contact note lesson risk status detail")
RELATION_TYPES = _words("relates_to depends_on part_of mentions blocks follows owned_by")
FOLDERS = _words("projects courses people tasks knowledge travel preferences meetings")
TYPES = {
    "projects": "project",
    "courses": "course",
    "people": "person",
    "tasks": "task",
    "knowledge": "fact",
    "travel": "trip",
    "preferences": "preference",
    "meetings": "meeting",
}


@dataclass(frozen=True)
class GenNote:
    path: Path  # relative to the vault
    title: str
    permalink: str


class Vocabulary:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.zh = list(ZH_WORDS)
        self.en = list(EN_WORDS)
        rng.shuffle(self.zh)
        rng.shuffle(self.en)
        self._zw = list(itertools.accumulate(1 / (i + 1) ** 0.9 for i in range(len(self.zh))))
        self._ew = list(itertools.accumulate(1 / (i + 1) ** 0.9 for i in range(len(self.en))))

    def zh_word(self) -> str:
        return self.rng.choices(self.zh, cum_weights=self._zw)[0]

    def en_word(self) -> str:
        return self.rng.choices(self.en, cum_weights=self._ew)[0]

    def phrase(self, n: int) -> str:
        """``n`` words, mostly Chinese (joined without spaces), with English words set off by spaces."""
        zh = self.rng.choices(self.zh, cum_weights=self._zw, k=n)
        en = self.rng.choices(self.en, cum_weights=self._ew, k=n)
        out = "".join(f" {e} " if self.rng.random() < 0.3 else z for z, e in zip(zh, en, strict=True))
        return " ".join(out.split())


def note_title(vocab: Vocabulary, i: int) -> str:
    return f"{vocab.zh_word()}{vocab.zh_word()} {vocab.en_word()} {i:06d}"


def render(
    title: str,
    permalink: str,
    type_: str,
    tags: list[str],
    observations: list[str],
    relations: list[str],
    day: int,
) -> str:
    stamp = f"2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}T09:00:00+08:00"
    lines = [
        "---",
        f"title: {title}",
        f"type: {type_}",
        f"permalink: {permalink}",
        f"tags: [{', '.join(tags)}]",
        f"created: {stamp}",
        f"modified: {stamp}",
        "origin: bench",
        "sensitivity: normal",
        "---",
        "",
        f"# {title}",
        "",
        "## Observations",
        *(f"- {o}" for o in observations),
        "",
        "## Relations",
        *(f"- {r}" for r in relations),
        "",
    ]
    return "\n".join(lines)


def generate(vault: Path, n: int, seed: int = 20261130) -> list[GenNote]:
    """Write ``n`` notes under ``vault/user/<folder>/`` and return them (deterministic for a seed)."""
    rng = random.Random(seed)
    vocab = Vocabulary(rng)
    titles = [note_title(vocab, i) for i in range(n)]
    notes = []
    for i, title in enumerate(titles):
        folder = FOLDERS[i % len(FOLDERS)]
        permalink = f"n{i:06d}-{hashlib.sha1(title.encode()).hexdigest()[:4]}"
        tags = list(
            dict.fromkeys(vocab.zh_word() if rng.random() < 0.6 else vocab.en_word() for _ in range(3))
        )
        observations = []
        for _ in range(rng.randint(5, 25)):
            text = vocab.phrase(rng.randint(5, 10))
            if rng.random() < 0.2:
                text += f" #{vocab.en_word()}"
            if rng.random() < 0.2:
                text += f" ({vocab.phrase(2)})"
            observations.append(f"[{rng.choice(CATEGORIES)}] {text}")
        relations = [
            f"{rng.choice(RELATION_TYPES)} [[{titles[rng.randrange(n)]}]]" for _ in range(rng.randint(2, 6))
        ]
        text = render(title, permalink, TYPES[folder], tags, observations, relations, rng.randrange(336))
        path = Path("user") / folder / f"{title}.md"
        (vault / path).parent.mkdir(parents=True, exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
        notes.append(GenNote(path, title, permalink))
    return notes


def queries(seed: int, count: int, notes: list[GenNote]) -> list[str]:
    """A mixed, seeded query set: Chinese words and compounds, English words, mixed, titles, misses."""
    rng = random.Random(seed + 1)
    vocab = Vocabulary(rng)
    makers = [
        lambda: vocab.zh_word(),
        lambda: vocab.zh_word() + vocab.zh_word(),
        lambda: f"{vocab.zh_word()} {vocab.zh_word()}",
        lambda: vocab.en_word(),
        lambda: f"{vocab.en_word()} {vocab.en_word()}",
        lambda: f"{vocab.en_word()} {vocab.zh_word()}",
        lambda: rng.choice(notes).title.rsplit(" ", 1)[0],
        lambda: rng.choice(["量子纠缠", "kubernetesoperator", "火星基地 补给"]),
    ]
    return [makers[i % len(makers)]() for i in range(count)]
