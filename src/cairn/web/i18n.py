"""The panel's words in English and Chinese, chosen by the browser's ``Accept-Language``."""

from __future__ import annotations

from collections.abc import Callable

LANGUAGES = ("en", "zh")

# key: (English, Chinese)
WORDS: dict[str, tuple[str, str]] = {
    "cairn": ("Cairn memory", "Cairn 记忆"),
    "nav.notes": ("Notes", "笔记"),
    "nav.search": ("Search", "搜索"),
    "nav.inbox": ("Inbox", "收件箱"),
    "nav.proposals": ("Proposals", "待批准的修改"),
    "nav.dream": ("Dream", "梦境整理"),
    "nav.sync": ("Sync", "同步"),
    "nav.trash": ("Trash", "回收站"),
    "logout": ("Log out", "退出"),
    "login.title": ("Log in to the Cairn panel", "登录 Cairn 管理面板"),
    "login.help": (
        "Open the login link that `cairn serve --http` printed, or paste the token it printed.",
        "请打开 `cairn serve --http` 打印的登录链接，或粘贴它打印的令牌。",
    ),
    "login.token": ("Token", "令牌"),
    "login.bad": ("That token is not this server's.", "令牌不正确。"),
    "login.submit": ("Log in", "登录"),
    "health.notes": ("notes", "篇笔记"),
    "health.damaged": ("damaged files", "个损坏文件"),
    "health.ok": ("no damaged files", "没有损坏文件"),
    "health.fresh": ("index follows changes by", "索引更新方式"),
    "health.inotify": ("file events (live)", "文件事件（实时）"),
    "health.scan": ("a scan before each call", "每次调用前扫描"),
    "notes.title": ("Notes", "笔记"),
    "notes.filter": ("Filter", "筛选"),
    "notes.scope": ("Scope", "范围"),
    "notes.folder": ("Folder", "文件夹"),
    "notes.type": ("Type", "类型"),
    "notes.tag": ("Tag", "标签"),
    "notes.none": ("No notes match.", "没有符合条件的笔记。"),
    "notes.modified": ("Modified", "修改时间"),
    "notes.count": ("shown", "条"),
    "note.path": ("File", "文件"),
    "note.observations": ("Observations", "观察"),
    "note.relations": ("Relations", "关系"),
    "note.backlinks": ("Linked from", "被以下笔记链接"),
    "note.edit": ("Edit", "编辑"),
    "note.save": ("Save", "保存"),
    "note.delete": ("Move to trash", "移到回收站"),
    "note.reason": ("Reason (optional)", "原因（可选）"),
    "note.saved": ("Saved.", "已保存。"),
    "note.conflict": (
        "This note was changed since you opened it. Nothing was overwritten: here are both versions.",
        "打开后这篇笔记已被修改，没有覆盖任何内容：下面是两个版本。",
    ),
    "note.theirs": ("The file now", "文件现在的内容"),
    "note.yours": ("Your text (not saved)", "你的文本（未保存）"),
    "note.deleted": ("Moved to the trash.", "已移到回收站。"),
    "note.sensitive": ("sensitive", "敏感"),
    "trash.title": ("Trash", "回收站"),
    "trash.none": ("The trash is empty.", "回收站是空的。"),
    "trash.restore": ("Restore", "恢复"),
    "trash.deleted": ("Deleted", "删除时间"),
    "trash.restored": ("Restored.", "已恢复。"),
    "search.title": ("Search", "搜索"),
    "search.query": ("Search words", "搜索词"),
    "search.go": ("Search", "搜索"),
    "search.sensitive": ("Include sensitive notes", "包括敏感笔记"),
    "search.none": ("Nothing found.", "没有找到。"),
    "search.hits": ("hits", "条结果"),
    "search.line": ("line", "第几行"),
    "search.remove_filter": ("remove filter", "去掉筛选"),
    "observe.title": ("Note an observation", "记下一条观察"),
    "observe.text": ("Observation", "观察内容"),
    "observe.tags": ("Tags (space separated)", "标签（用空格分隔）"),
    "observe.durable": ("Long-term (keep it)", "长期（值得保留）"),
    "observe.submit": ("Add to the inbox", "加入收件箱"),
    "observe.done": ("Added to the inbox.", "已加入收件箱。"),
    "observe.duplicate": ("Already in the inbox.", "收件箱里已经有这一条。"),
    "inbox.title": ("Inbox", "收件箱"),
    "inbox.none": ("No open observations.", "没有待处理的观察。"),
    "inbox.archive": ("Archive", "归档"),
    "inbox.drop": ("Drop", "丢弃"),
    "inbox.durable": ("long-term", "长期"),
    "inbox.short": ("short-term", "短期"),
    "inbox.open": ("open", "条待处理"),
    "inbox.done": ("Done.", "完成。"),
    "inbox.readonly": (
        "Archiving and dropping by hand needs a newer Cairn.",
        "手动归档和丢弃需要更新版本的 Cairn。",
    ),
    "proposals.title": ("Proposals", "待批准的修改"),
    "proposals.none": ("No proposals.", "没有待批准的修改。"),
    "proposals.approve": ("Approve", "批准"),
    "proposals.reject": ("Reject", "拒绝"),
    "proposals.why": ("Reason", "原因"),
    "proposals.by": ("by", "提出者"),
    "proposals.expires": ("expires", "过期时间"),
    "proposals.help": (
        "Changes agents asked for in approval mode. Approving writes the change only if its note is "
        "still as the agent saw it.",
        "审批模式下智能体请求的修改。批准时只有当笔记仍是智能体看到的版本时才会写入。",
    ),
    "proposals.direct": (
        '(agents write directly; set write_mode = "propose" in cairn.toml to review first)',
        '（智能体直接写入；在 cairn.toml 中设置 write_mode = "propose" 即可先审后写）',
    ),
    "proposals.all": ("all", "全部"),
    "proposals.status.pending": ("waiting", "待批准"),
    "proposals.status.approved": ("approved", "已批准"),
    "proposals.status.rejected": ("rejected", "已拒绝"),
    "proposals.status.conflicted": ("conflicted", "有冲突"),
    "proposals.status.expired": ("expired", "已过期"),
    "proposals.kind.add": ("new note", "新建笔记"),
    "proposals.kind.replace": ("change", "修改"),
    "proposals.kind.remove": ("delete", "删除"),
    "proposals.kind.dream": ("dream run", "梦境整理"),
    "proposals.decided": ("decided", "决定于"),
    "proposals.diff": ("the change", "修改内容"),
    "proposals.conflicted": (
        "Not written: the note changed after this was proposed.",
        "未写入：提出修改之后笔记已被改动。",
    ),
    "proposals.expired": (
        "Expired before anyone decided: it can no longer be approved.",
        "在决定之前已过期，无法再批准。",
    ),
    "proposals.approved": ("Approved and written.", "已批准并写入。"),
    "proposals.rejected": ("Rejected; nothing written.", "已拒绝，未写入任何内容。"),
    "proposals.now_conflicted": (
        "Not written: the note changed after it was proposed. The proposal is marked conflicted.",
        "未写入：提出修改之后笔记已被改动，此修改已标记为有冲突。",
    ),
    "proposals.now_expired": ("That proposal had expired; nothing written.", "该修改已过期，未写入。"),
    "dream.title": ("Dream", "梦境整理"),
    "dream.enabled": ("The dream is on", "梦境整理已开启"),
    "dream.disabled": ("The dream is off", "梦境整理已关闭"),
    "dream.turn_on": ("Turn on", "开启"),
    "dream.turn_off": ("Turn off", "关闭"),
    "dream.model": ("Model", "模型"),
    "dream.base_url": ("Endpoint (OpenAI-compatible)", "接口地址（兼容 OpenAI）"),
    "dream.daily_at": ("Daily at (HH:MM)", "每天几点（HH:MM）"),
    "dream.save": ("Save settings", "保存设置"),
    "dream.last": ("Last run", "上次运行"),
    "dream.never": ("never", "从未"),
    "dream.run": ("Run now", "立即运行"),
    "dream.log": ("The dream log (latest)", "整理日志（最新）"),
    "dream.outcome": ("Outcome", "结果"),
    "dream.open": ("open observations", "条待处理观察"),
    "sync.title": ("Sync", "同步"),
    "sync.remote": ("Remote", "远端"),
    "sync.none": ("No remote: this vault lives on this machine only.", "没有远端：此库只在本机。"),
    "sync.last": ("Last sync", "上次同步"),
    "sync.outbox": ("Waiting to upload", "等待上传"),
    "sync.now": ("Sync now", "立即同步"),
    "sync.conflicts": ("Conflicts", "冲突"),
    "sync.no_conflicts": ("No conflicts.", "没有冲突。"),
    "sync.keep_note": ("Keep the note", "保留笔记"),
    "sync.keep_conflict": ("Keep this copy", "保留这份副本"),
    "sync.merge": ("Save merged text", "保存合并后的文本"),
    "sync.note": ("The note", "笔记"),
    "sync.copy": ("The other copy", "另一份副本"),
    "sync.help": (
        "When two devices changed the same lines, the sync keeps this device's text and saves the "
        "other one whole under .conflict/. Decide here which to keep.",
        "两台设备改了同一处时，同步保留本机的文本，把另一份完整保存在 .conflict/ 下。请在这里决定保留哪一份。",
    ),
    "sync.no_remote": (
        "No remote: this vault lives on this machine only. Attach one with `cairn remote set URL`.",
        "没有远端：此库只在本机。可用 `cairn remote set URL` 添加远端。",
    ),
    "sync.from": ("from", "来自"),
    "sync.at": ("at", "时间"),
    "sync.mine": ("This device (the note as it is)", "本机（当前笔记）"),
    "sync.theirs": ("The other device (the conflict copy)", "另一台设备（冲突副本）"),
    "sync.differences": ("Differences (− this device, + the other)", "差异（− 本机，+ 另一台设备）"),
    "sync.keep_mine": ("Keep mine", "保留本机版本"),
    "sync.keep_theirs": ("Keep theirs", "保留对方版本"),
    "sync.merge_by_hand": ("Or merge by hand", "或手动合并"),
    "sync.gone": ("The note is gone", "笔记已不存在"),
    "sync.resolved": ("Conflict settled; the copy is removed.", "冲突已解决，副本已删除。"),
    "sync.changed": (
        "The note changed since this page was shown: nothing was written and the conflict copy is "
        "kept. Look again below.",
        "页面显示之后笔记已被修改：未写入任何内容，冲突副本仍保留。请重新查看下方内容。",
    ),
    "sync.report": ("Sync report", "同步结果"),
    "sync.failed": ("Sync failed", "同步失败"),
    "sync.interval": ("Every", "同步间隔"),
    "health.outbox": ("waiting to upload", "个待上传"),
    "health.conflicts": ("sync conflicts", "个同步冲突"),
    "error.title": ("That did not work", "操作没有成功"),
    "error.csrf": (
        "This form has expired or did not come from this panel. Reload the page and try again.",
        "表单已过期或不是来自本面板。请刷新页面后重试。",
    ),
    "error.foreign": (
        "Refused: this address is not one this server answers to.",
        "已拒绝：此地址不属于本服务器。",
    ),
    "error.notfound": ("Not found.", "未找到。"),
    "back": ("Back", "返回"),
}


def choose(accept_language: str | None) -> str:
    """``zh`` or ``en``: the first of them the browser ranks highest; English otherwise."""
    best, best_q = "en", -1.0
    for order, part in enumerate((accept_language or "").split(",")):
        name, _, params = part.strip().partition(";")
        lang = name.strip().lower().split("-")[0]
        if lang not in LANGUAGES:
            continue
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if q - order * 1e-6 > best_q:
            best, best_q = lang, q - order * 1e-6
    return best


def translator(lang: str) -> Callable[[str], str]:
    column = LANGUAGES.index(lang) if lang in LANGUAGES else 0
    return lambda key: WORDS[key][column] if key in WORDS else key
