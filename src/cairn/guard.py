"""Refuse credentials on every write path.

Cairn never stores a secret: a note, observation or tag that holds an API key, a token, a
password or a one-time code is refused with an error that names the kind of secret and where it
is, never the secret itself. Long digit runs (ID and bank card numbers) are refused unless the
note is marked ``sensitivity: sensitive``.

Rules where judgement was needed:

- ``password: X`` style (``password passwd passphrase pwd 密码 口令`` followed by ``: = ： 是 为``
  or `` is ``): X is the first word after the separator, with quotes and trailing punctuation
  removed. It is *not* a password when it is shorter than 4 characters, a reference rather than
  a literal (``(see 1Password)``, ``<redacted>``, ``${DB_PASS}``, ``os.environ["X"]``, a path),
  a mask (``********``), a placeholder word (``none``, ``required``, ``expired`` ...), only CJK
  text (``密码是生日加手机号``), or a letters-only word that the sentence goes on after
  (``password: stored in the vault``). A lone word such as ``password: dragon`` is refused.
- ``token: X`` style (``token api_key apikey secret secret_key access_key``, also as the end of
  a name such as ``GITHUB_TOKEN``): X must also be 8+ characters and look random (two of lower
  case, upper case, digits), so ``token: 8192`` or ``token budget is tight`` pass.
- Bare words never trigger: "I forgot my password", "the token limit is 8k".
- One-time codes: a 4-8 digit number at most 10 characters (no line break) after
  ``验证码 校验码 动态码 短信码 verification/security/one-time/2FA/MFA code OTP``.
- Long digit runs: 15+ digits in one run (or 17 and an ``X``, a Chinese ID), or groups of 4-6
  then 3-6 digits split by spaces or dashes as on cards. Eleven-digit mobile numbers, dates,
  millisecond timestamps, digits inside hex hashes and lists of years pass.
- Columns count characters (code points), 1-based, at the start of the secret value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .errors import SecretRefused

__all__ = ["LONG_DIGITS", "Finding", "check_text", "find_secrets"]

LONG_DIGITS = "long digit run (ID or bank card number)"


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: what kind it is and where it starts (1-based)."""

    kind: str
    line: int
    column: int


_Check = Callable[[re.Match[str]], bool]

_KEY_CHARS = "A-Za-z0-9_-"
_PLACEHOLDER_TEXT = """
    none null nil n/a na empty blank redacted hidden masked omitted removed unknown unset
    secret password passwd token required optional wrong incorrect invalid expired missing
    same reset changed example placeholder todo tbd xxxx
"""
_PLACEHOLDERS = frozenset(_PLACEHOLDER_TEXT.split())
_VALUE = r"(?P<secret>[^\s，。；、！？]+)"
_REFERENCE_RE = re.compile(r"[(<\[{$%/~]|[A-Za-z_][\w.]*[(\[]")
_CJK_ONLY_RE = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")
_NEXT_WORD_RE = re.compile(r"[ \t]+[A-Za-z]")


def _looks_random(value: str) -> bool:
    """True for mixed character classes, as in generated keys, not in plain words."""
    if value[:1].isupper() and value[1:].isalpha() and value[1:].islower():
        return False
    classes = (
        any(c.islower() for c in value),
        any(c.isupper() for c in value),
        any(c.isdigit() for c in value),
    )
    return sum(classes) >= 2


def _clean_value(match: re.Match[str]) -> tuple[str, int]:
    """The assigned value without quotes or trailing punctuation, and its offset."""
    raw = match.group("secret")
    value = raw.lstrip("'\"「『`")
    start = match.start("secret") + len(raw) - len(value)
    return value.rstrip(".,;:!?)]}'\"」』`"), start


def _is_literal(match: re.Match[str], min_len: int) -> bool:
    value, start = _clean_value(match)
    if len(value) < min_len or value.lower() in _PLACEHOLDERS:
        return False
    if _REFERENCE_RE.match(value) or set(value) <= set("*xX•.-_#"):
        return False
    if _CJK_ONLY_RE.fullmatch(value):
        return False
    if value.isascii() and value.isalpha():
        # "password: stored in the vault" is prose; "password: dragon" is not.
        return not _NEXT_WORD_RE.match(match.string, start + len(value))
    return True


def _password_value(match: re.Match[str]) -> bool:
    return _is_literal(match, 4)


def _token_value(match: re.Match[str]) -> bool:
    return _is_literal(match, 8) and _looks_random(_clean_value(match)[0])


def _openai_key(match: re.Match[str]) -> bool:
    body = match.group("secret")
    longest = max(len(part) for part in re.split(r"[_-]", body))
    return _looks_random(body) and longest >= 10


def _random_secret(match: re.Match[str]) -> bool:
    return _looks_random(match.group("secret"))


def _long_number(match: re.Match[str]) -> bool:
    groups = re.split(r"[ -]", match.group())
    if len(groups) > 1 and all(re.fullmatch(r"(?:19|20)\d\d", g) for g in groups):
        return False  # a list of years, not a card number
    return sum(len(g) for g in groups) >= 15


_SEP = r"[\"']?(?:[ \t]*[:=：]|[ \t]*(?:是|为)[:：]?|[ \t]+is(?=[ \t]))[ \t]*"
_NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"

# In priority order: where two rules match overlapping text, the earlier one is reported.
_RULES: list[tuple[str, re.Pattern[str], _Check | None]] = [
    ("private key block", re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"), None),
    (
        "OpenAI-style API key",
        re.compile(
            rf"(?<![{_KEY_CHARS}])sk-(?:(?:proj|ant|svcacct|admin)-)?(?P<secret>[{_KEY_CHARS}]{{20,}})"
        ),
        _openai_key,
    ),
    (
        "GitHub token",
        re.compile(rf"{_NO_ALNUM_BEFORE}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{22,}})"),
        None,
    ),
    ("AWS access key id", re.compile(rf"{_NO_ALNUM_BEFORE}(?:AKIA|ASIA)[A-Z0-9]{{16}}(?![A-Za-z0-9])"), None),
    ("Slack token", re.compile(rf"{_NO_ALNUM_BEFORE}xox[abpors]-[A-Za-z0-9-]{{10,}}"), None),
    (
        "JSON Web Token",
        re.compile(rf"(?<![{_KEY_CHARS}])eyJ[{_KEY_CHARS}]{{5,}}\.[{_KEY_CHARS}]{{5,}}\.[{_KEY_CHARS}]+"),
        None,
    ),
    (
        "bearer token",
        re.compile(r"(?i)(?<![A-Za-z])bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
        _random_secret,
    ),
    (
        "password",
        re.compile(rf"(?i)(?<![A-Za-z])(?:pass(?:word|wd|phrase)|pwd|密码|口令)(?![A-Za-z]){_SEP}{_VALUE}"),
        _password_value,
    ),
    (
        "API key or token",
        re.compile(
            r"(?i)(?<![A-Za-z])(?:token|api[_-]?key|secret(?:[_-]?key)?|access[_-]?key(?:[_-]?id)?)"
            rf"(?![A-Za-z]){_SEP}{_VALUE}"
        ),
        _token_value,
    ),
    (
        "one-time code",
        re.compile(
            r"(?i)(?:验证码|校验码|动态码|短信码|(?<![A-Za-z])(?:(?:verification|security|one[- ]time|2fa|mfa)"
            r"\s+code|otp)(?![A-Za-z]))[^\d\n]{0,10}(?P<secret>(?<!\d)\d{4,8})(?!\d)"
        ),
        None,
    ),
]

# 15+ digits in one run (an 18-character Chinese ID may end in X), or grouped as on a card:
# "6222 0210 0112 3456 789". Eleven-digit phone numbers and dates stay well below.
_LONG_DIGITS_RE = re.compile(
    r"(?<![0-9A-Za-z])(?:\d{17}[Xx]|\d{15,}|\d{4,6}(?:[ -]\d{3,6}){2,})(?![0-9A-Za-z])"
)


def find_secrets(text: str, *, sensitive: bool = False) -> list[Finding]:
    """Find credentials (and, unless ``sensitive``, long digit runs) in a text.

    Args:
        text: the text about to be written.
        sensitive: the note is marked ``sensitivity: sensitive``; ID and card numbers may stay,
            credentials still may not.

    Returns:
        One finding per secret, in text order; overlapping matches are reported once.
    """
    rules = list(_RULES)
    if not sensitive:
        rules.append((LONG_DIGITS, _LONG_DIGITS_RE, _long_number))
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for kind, pattern, check in rules:
        for match in pattern.finditer(text):
            start, end = match.span()
            if check is not None and not check(match):
                continue
            if any(start < e and s < end for s, e in taken):
                continue
            taken.append((start, end))
            where = _clean_value(match)[1] if "secret" in pattern.groupindex else start
            found.append((where, kind))
    found.sort()
    return [Finding(kind, *_line_column(text, offset)) for offset, kind in found]


def check_text(text: str, *, sensitive: bool = False, where: str = "content") -> None:
    """Refuse a text that holds a secret.

    Args:
        text: the text about to be written.
        sensitive: the note is marked ``sensitivity: sensitive`` (long digit runs allowed).
        where: the field being checked, named in the message ("title", "body", "tags" ...).

    Raises:
        SecretRefused: naming the first finding's kind and position, never the secret.
    """
    findings = find_secrets(text, sensitive=sensitive)
    if not findings:
        return
    first = findings[0]
    article = "an" if first.kind[0] in "AEIOaeio" and not first.kind.startswith("one") else "a"
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    if first.kind == LONG_DIGITS:
        advice = "remove it, or mark the note `sensitivity: sensitive`"
    else:
        advice = "remove it (Cairn never stores credentials)"
    raise SecretRefused(
        f"refused: {where} line {first.line}, column {first.column} holds {article} {first.kind}{more}; {advice}"
    )


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
