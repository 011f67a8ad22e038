"""Refuse credentials on every write path.

Cairn never stores a secret: a note, observation, tag, folder or type that holds an API key, a
token, a password, a PIN or a one-time code is refused with an error that names the kind of
secret and where it is, never the secret itself. ID, bank card and IBAN numbers are refused
unless the note is marked ``sensitivity: sensitive``.

Rules where judgement was needed:

- The text is read with zero-width and other invisible format characters removed and full-width
  letters and digits folded to ASCII, so ``ghp_`` + U+200B + ``...`` is still a GitHub token.
  Positions are reported in the text as given.
- Vendor keys are recognised by their prefixes and lengths (``sk-``, ``ghp_``, ``AKIA``,
  ``AIza``, ``xoxb-``, ``sk_live_``, ``SG.``, ``npm_``, ``pypi-``, ``glpat-``, ``hf_`` ...), as
  are chat webhook URLs (Slack, Discord, WeCom, DingTalk, Feishu) and any URL that carries a
  password (``postgres://admin:S3cr3t@db``; a placeholder such as ``:${PASS}@`` passes).
- ``password: X`` style (``password passwd passphrase passcode pwd pw 密码 口令``, and so
  ``支付密码`` and ``门禁密码``, followed by ``: = ： 是 为`` or `` is ``; "password for prod is X"
  too; after a Chinese word a space is enough when X is ASCII and ends there): X is the first
  word after the separator, with quotes and trailing punctuation removed. It is *not* a password
  when it is shorter than 4 characters, a reference rather than a literal (``(see 1Password)``,
  ``<redacted>``, ``${DB_PASS}``, ``os.environ["X"]``, a path), a mask (``********``), a
  placeholder word (``none``, ``required``, ``expired`` ...), only CJK text
  (``密码是生日加手机号``), or a letters-only word that the sentence goes on after
  (``password: stored in the vault``). A lone word such as ``password: dragon`` is refused.
- ``token: X`` style (``token api key secret secret key access key client secret`` ..., also as
  the end of a name such as ``GITHUB_TOKEN`` or ``AccountKey``): X must also be 8+ characters
  and look random (two of lower case, upper case, digits), so ``token: 8192`` passes.
- Bare words never trigger: "I forgot my password", "the token limit is 8k".
- PINs and card security codes: 4-8 (3-4) digits after ``PIN`` / ``PIN码`` / ``CVV`` /
  ``安全码`` and a separator. One-time codes: a 4-8 digit number at most 10 characters (no line
  break) after ``验证码 校验码 动态码 短信码 verification/security/one-time/2FA/MFA code OTP``.
- ID and card numbers are told by their check digits, not their length: an 18-character Chinese
  resident ID with a valid region digit, birth date and GB 11643 check character; a 13-19 digit
  card number that passes Luhn and starts like a card scheme (Visa, Mastercard, UnionPay, Amex,
  JCB, Discover, Diners, Maestro); an IBAN whose mod-97 check holds. After ``身份证`` or ``卡号``
  (and the like) the shape alone is enough. A number after ``订单 单号 运单 发票 order tracking
  invoice tweet``, or inside a URL, is not a card. So 19-digit order numbers and tweet ids,
  20-digit invoice numbers, phone numbers, dates, timestamps and hashes pass.
- Columns count characters (code points), 1-based, at the start of the secret value.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from .errors import SecretRefused

__all__ = ["LONG_DIGITS", "PERSONAL_NUMBERS", "Finding", "check_text", "find_secrets"]

ID_NUMBER = "Chinese resident ID number"
CARD_NUMBER = "bank card number"
IBAN = "IBAN (bank account number)"
PERSONAL_NUMBERS = frozenset({ID_NUMBER, CARD_NUMBER, IBAN})
# Named in every message about one of PERSONAL_NUMBERS (scripts and tests look for it).
LONG_DIGITS = "ID or bank card number"


@dataclass(frozen=True)
class Finding:
    """One secret found in a text: what kind it is and where it starts (1-based)."""

    kind: str
    line: int
    column: int


_Check = Callable[[re.Match[str]], bool]

# -- reading the text as a person sees it ---------------------------------------------------------

# Unicode's format characters (category Cf) and the other invisible fillers: a test compares this
# set with unicodedata.
_INVISIBLE_RE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f\u0890\u0891"
    "\u08e2\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Full-width digits and letters (ＡＫＩＡ１２３) and wide spaces read as their ASCII selves.
_FOLD = str.maketrans(
    {
        **{
            chr(c): chr(c - 0xFEE0)
            for c in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B))
        },
        "\u00a0": " ",
        "\u3000": " ",
    }
)


def _normalize(text: str) -> tuple[str, list[int] | None]:
    """The text to match, and for each of its characters the offset in ``text`` (None: the same)."""
    if text.isascii():
        return text, None
    folded = text.translate(_FOLD)
    if not _INVISIBLE_RE.search(folded):
        return folded, None
    kept: list[str] = []
    offsets: list[int] = []
    last = 0
    for m in _INVISIBLE_RE.finditer(folded):
        kept.append(folded[last : m.start()])
        offsets.extend(range(last, m.start()))
        last = m.end()
    kept.append(folded[last:])
    offsets.extend(range(last, len(folded)))
    return "".join(kept), offsets


# -- what a value must look like ------------------------------------------------------------------

_KEY_CHARS = "A-Za-z0-9_-"
_PLACEHOLDER_TEXT = """
    none null nil n/a na empty blank redacted hidden masked omitted removed unknown unset
    secret password passwd token required optional wrong incorrect invalid expired missing
    same reset changed example placeholder todo tbd xxxx pass pwd user username
"""
_PLACEHOLDERS = frozenset(_PLACEHOLDER_TEXT.split())
_VALUE = r"(?P<secret>[^\s，。；、！？]+)"
_REFERENCE_RE = re.compile(r"[(<\[{$%/~]|[A-Za-z_][\w.]*[(\[]")
_CJK_ONLY_RE = re.compile(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")
_NEXT_WORD_RE = re.compile(r"[ \t]+[A-Za-z]")
_MASK = frozenset("*xX•.-_#")


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


def _entropy(value: str) -> float:
    """Shannon entropy in bits per character: ~4+ for generated keys, ~3 for words and names."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_QUOTED_RE = re.compile(r"""(?:"([^"\n]+)"|'([^'\n]+)'|「([^」\n]+)」)""")


def _clean_value(match: re.Match[str]) -> tuple[str, int]:
    """The assigned value without quotes or trailing punctuation, and its offset. A quoted value
    runs to its closing quote, spaces and all (``passphrase = "correct horse battery"``)."""
    quoted = _QUOTED_RE.match(match.string, match.start("secret"))
    if quoted is not None:
        group = next(i for i in (1, 2, 3) if quoted.group(i) is not None)
        return quoted.group(group), quoted.start(group)
    raw = match.group("secret")
    value = raw.lstrip("'\"「『`")
    start = match.start("secret") + len(raw) - len(value)
    return value.rstrip(".,;:!?)]}'\"」』`"), start


def _is_literal(match: re.Match[str], min_len: int) -> bool:
    value, start = _clean_value(match)
    if len(value) < min_len or value.lower() in _PLACEHOLDERS:
        return False
    if _REFERENCE_RE.match(value) or set(value) <= _MASK:
        return False
    if _CJK_ONLY_RE.fullmatch(value):
        return False
    if value.isascii() and value.isalpha() and " " not in value:
        # "password: stored in the vault" is prose; "password: dragon" is not.
        return not _NEXT_WORD_RE.match(match.string, start + len(value))
    return True


def _password_value(match: re.Match[str]) -> bool:
    return _is_literal(match, 4)


def _token_value(match: re.Match[str]) -> bool:
    return _is_literal(match, 8) and _looks_random(_clean_value(match)[0])


def _named_key_value(match: re.Match[str]) -> bool:
    value = _clean_value(match)[0]
    return len(value) >= 20 and _looks_random(value) and _entropy(value) >= 3.5


def _openai_key(match: re.Match[str]) -> bool:
    body = match.group("secret")
    longest = max(len(part) for part in re.split(r"[_-]", body))
    return _looks_random(body) and longest >= 10


def _random_secret(match: re.Match[str]) -> bool:
    return _looks_random(match.group("secret"))


def _url_password(match: re.Match[str]) -> bool:
    value = match.group("secret")
    return not (value.lower() in _PLACEHOLDERS or _REFERENCE_RE.match(value) or set(value) <= _MASK)


def _basic_auth(match: re.Match[str]) -> bool:
    value = match.group("secret")
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and decoded.isascii() and decoded.decode("ascii").isprintable()


def _aws_secret(match: re.Match[str]) -> bool:
    value = match.group("secret")
    line_start = match.string.rfind("\n", 0, match.start()) + 1
    context = match.string[line_start : match.start()].lower()
    return "aws" in context and any(c.isupper() for c in value) and any(c.islower() for c in value)


def _hex_key(match: re.Match[str]) -> bool:
    value = match.group("secret")
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


# -- the rules --------------------------------------------------------------------------------------

_SEP = r"[\"']?(?:[ \t]*[:=：]|[ \t]*(?:是|为)[:：]?|[ \t]+is(?=[ \t]))[ \t]*"
_NO_ALNUM_BEFORE = r"(?<![A-Za-z0-9])"
_NO_KEY_BEFORE = rf"(?<![{_KEY_CHARS}])"
_PASSWORD_WORD = r"(?:pass(?:word|wd|phrase|code)|pwd|pw|密码|口令)"
# "the SSH password for prod is X", "password to the wifi: X"
_FOR_WHAT = (
    r"(?:[ \t]+(?:for|of|on|to|at)(?:[ \t]+(?:the|my|our|this|that|your))?(?:[ \t]+[\w.@/-]{1,40}){1,2}?)?"
)


_Rule = tuple[str, tuple[str, ...], re.Pattern[str], _Check | None]


def _rule(kind: str, needles: tuple[str, ...], pattern: str, check: _Check | None = None) -> _Rule:
    """A rule that runs only on text holding one of ``needles`` (lower case): a substring test
    is far cheaper than a regular expression scan, and most notes hold none of them."""
    return kind, needles, re.compile(pattern), check


# In priority order: where two rules match overlapping text, the earlier one is reported.
_RULES: list[_Rule] = [
    _rule(
        "private key block",
        ("private key", "putty-user-key"),
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----|PuTTY-User-Key-File-\d",
    ),
    _rule(
        "Anthropic API key",
        ("sk-ant-",),
        rf"{_NO_KEY_BEFORE}sk-ant-(?:api|admin)\d\d-(?P<secret>[{_KEY_CHARS}]{{20,}})",
    ),
    _rule(
        "OpenAI-style API key",
        ("sk-",),
        rf"{_NO_KEY_BEFORE}sk-(?:(?:proj|ant|svcacct|admin)-)?(?P<secret>[{_KEY_CHARS}]{{20,}})",
        _openai_key,
    ),
    _rule(
        "GitHub token",
        ("gh", "github_pat_"),
        rf"{_NO_ALNUM_BEFORE}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{22,}})",
    ),
    _rule("GitLab token", ("gl",), rf"{_NO_ALNUM_BEFORE}gl(?:pat|dt|ptt|rt|cbt|oas)-[{_KEY_CHARS}]{{20,}}"),
    _rule(
        "AWS access key id",
        ("akia", "asia"),
        rf"{_NO_ALNUM_BEFORE}(?:AKIA|ASIA)[A-Z0-9]{{16}}(?![A-Za-z0-9])",
    ),
    _rule("Google API key", ("aiza",), rf"{_NO_KEY_BEFORE}AIza[{_KEY_CHARS}]{{35}}(?![{_KEY_CHARS}])"),
    _rule(
        "Google OAuth secret",
        ("gocspx-", "ya29."),
        rf"{_NO_KEY_BEFORE}(?:GOCSPX-[{_KEY_CHARS}]{{20,}}|ya29\.[{_KEY_CHARS}]{{20,}})",
    ),
    _rule("Slack token", ("xox",), rf"{_NO_ALNUM_BEFORE}xox[abpors]-[A-Za-z0-9-]{{10,}}"),
    _rule(
        "chat webhook URL",
        ("hooks.slack.com", "discord", "qyapi.weixin", "oapi.dingtalk", "open.feishu", "open.larksuite"),
        r"(?i)https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Z0-9/_-]{20,}"
        r"|(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"
        r"|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=[\w-]{16,}"
        r"|oapi\.dingtalk\.com/robot/send\?access_token=\w{16,}"
        r"|open\.(?:feishu\.cn|larksuite\.com)/open-apis/bot/v2/hook/[\w-]{16,})",
    ),
    _rule(
        "Stripe key",
        ("k_live_", "k_test_", "whsec_"),
        rf"{_NO_ALNUM_BEFORE}(?:[sr]k_(?:live|test)_[A-Za-z0-9]{{16,}}|whsec_[A-Za-z0-9]{{24,}})",
    ),
    _rule(
        "Twilio API key", ("sk",), rf"{_NO_ALNUM_BEFORE}SK(?P<secret>[0-9a-f]{{32}})(?![0-9A-Za-z])", _hex_key
    ),
    _rule(
        "SendGrid API key", ("sg.",), rf"{_NO_ALNUM_BEFORE}SG\.[{_KEY_CHARS}]{{16,}}\.[{_KEY_CHARS}]{{30,}}"
    ),
    _rule("npm token", ("npm_",), rf"{_NO_ALNUM_BEFORE}npm_[A-Za-z0-9]{{36}}(?![A-Za-z0-9])"),
    _rule("PyPI token", ("pypi-age",), rf"{_NO_ALNUM_BEFORE}pypi-AgE[{_KEY_CHARS}]{{40,}}"),
    _rule("Hugging Face token", ("hf_",), rf"{_NO_ALNUM_BEFORE}hf_[A-Za-z0-9]{{30,}}(?![A-Za-z0-9])"),
    _rule("DigitalOcean token", ("_v1_",), rf"{_NO_ALNUM_BEFORE}do[opr]_v1_[a-f0-9]{{64}}"),
    _rule("Shopify token", ("shp",), rf"{_NO_ALNUM_BEFORE}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{{32}}"),
    _rule(
        "Alibaba Cloud AccessKey", ("ltai",), rf"{_NO_ALNUM_BEFORE}LTAI[A-Za-z0-9]{{12,24}}(?![A-Za-z0-9])"
    ),
    _rule("Tencent Cloud SecretId", ("akid",), rf"{_NO_ALNUM_BEFORE}AKID[A-Za-z0-9]{{32}}(?![A-Za-z0-9])"),
    _rule("Telegram bot token", (":aa",), r"(?<![0-9])\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])"),
    _rule(
        "Mailgun API key",
        ("key-",),
        rf"{_NO_ALNUM_BEFORE}key-(?P<secret>[0-9a-f]{{32}})(?![0-9a-z])",
        _hex_key,
    ),
    _rule(
        "JSON Web Token",
        ("eyj",),
        rf"{_NO_KEY_BEFORE}eyJ[{_KEY_CHARS}]{{5,}}\.[{_KEY_CHARS}]{{5,}}\.[{_KEY_CHARS}]+",
    ),
    _rule(
        "password in a URL",
        ("://",),
        r"(?i)(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{1,20}://[^\s:/@?#]*:(?P<secret>[^\s@/?#]+)@(?=[^\s@])",
        _url_password,
    ),
    _rule(
        "bearer token",
        ("bearer",),
        r"(?i)(?<![A-Za-z])bearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})",
        _random_secret,
    ),
    _rule(
        "basic-auth credentials",
        ("basic",),
        r"(?<![A-Za-z])[Bb]asic\s+(?P<secret>[A-Za-z0-9+/]{8,}={0,2})",
        _basic_auth,
    ),
    _rule(
        "AWS secret access key",
        ("aws",),
        r"(?<![A-Za-z0-9/+])(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
        _aws_secret,
    ),
    _rule(
        "password",
        ("pass", "pw", "密码", "口令"),
        rf"(?i)(?<![A-Za-z]){_PASSWORD_WORD}(?![A-Za-z]){_FOR_WHAT}{_SEP}{_VALUE}",
        _password_value,
    ),
    # "门禁密码 4821#", "密码123456": after a Chinese word a space or nothing separates.
    _rule(
        "password",
        ("密码", "口令"),
        r"(?:密码|口令)(?:[ \t]*(?:[:=：]|是|为)[:：]?)?[ \t]*(?P<secret>[\x21-\x7e]+)(?=[\s，。；、！？）]|$)",
        _password_value,
    ),
    _rule(
        "PIN",
        ("pin",),
        r"(?:(?<![A-Za-z])PIN(?: ?code)?(?![A-Za-z])|(?<![A-Za-z])(?i:pin(?:[ _-]?code)?)(?=[ \t]*[:=：])"
        r"|(?i:pin)码)"
        r"[^\d\n]{0,6}(?P<secret>(?<!\d)\d{4,8})(?!\d)",
    ),
    _rule(
        "card security code",
        ("cvv", "cvc", "cvn", "安全码"),
        r"(?:(?<![A-Za-z])(?i:cvv2?|cvc2?|cvn)(?![A-Za-z])|安全码)[^\d\n]{0,6}(?P<secret>(?<!\d)\d{3,4})(?!\d)",
    ),
    _rule(
        "API key or token",
        ("token", "key", "secret"),
        r"(?i)(?<![A-Za-z])(?:token|api[ _-]?key|(?:client[ _-]?)?secret(?:[ _-]?(?:access[ _-]?)?key)?"
        r"|access[ _-]?key(?:[ _-]?id)?|private[ _-]?key(?:[ _-]?id)?|account[ _-]?key|auth[ _-]?key"
        rf"|shared[ _-]?access[ _-]?key)(?![A-Za-z]){_SEP}{_VALUE}",
        _token_value,
    ),
    _rule(
        "API key or token",
        ("key", "secret", "token"),
        r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:Key|KEY|Secret|SECRET|Token|TOKEN|_key|_secret|_token)"
        r"[\"']?[ \t]*[:=][ \t]*[\"']?(?P<secret>[A-Za-z0-9+/=_.-]{20,})",
        _named_key_value,
    ),
    _rule(
        "one-time code",
        ("验证码", "校验码", "动态码", "短信码", "动态密码", "code", "otp"),
        r"(?i)(?:验证码|校验码|动态码|短信码|动态密码|(?<![A-Za-z])(?:(?:verification|security|one[- ]time|2fa|mfa)"
        r"\s+code|otp)(?![A-Za-z]))[^\d\n]{0,10}(?P<secret>(?<!\d)\d{4,8})(?!\d)",
    ),
]

# -- ID, card and account numbers -----------------------------------------------------------------

# A run of digits (an ID may end in X), or digits grouped by spaces or dashes as cards are written.
_NUMBER_RE = re.compile(
    r"(?<![0-9A-Za-z])(?:\d{17}[Xx]|\d{13,19}|\d{4,6}(?:[ -]\d{3,8}){1,4}[Xx]?)(?![0-9A-Za-z])"
)
_IBAN_RE = re.compile(
    r"(?<![0-9A-Za-z])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![0-9A-Za-z])"
)
_ID_CONTEXT = re.compile(r"(?i)身份证|证件号|身份号|id[ -]?card|id[ -]?(?:number|no)|identity")
_CARD_CONTEXT = re.compile(r"(?i)卡号|银行卡|信用卡|借记卡|储蓄卡|银联|card|visa|master|amex|unionpay")
_NOT_CARD_CONTEXT = re.compile(
    r"(?i)订单|单号|运单|快递|物流|发票|票号|流水|交易号|编号|工单|order|tracking|invoice|tweet|status"
    r"|shipment|waybill|ticket|ref|txn|transaction|isbn"
)
_GB11643_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
# The card schemes' first digits (issuer identification numbers) and the lengths they issue.
_CARD_SCHEMES = (
    (re.compile(r"4"), (13, 16, 19)),  # Visa
    (re.compile(r"5[1-5]|2(?:2[2-9]|[3-6]|7[01]|720)"), (16,)),  # Mastercard
    (re.compile(r"3[47]"), (15,)),  # American Express
    (re.compile(r"62|81"), (16, 17, 18, 19)),  # UnionPay
    (re.compile(r"35|6(?:011|4[4-9]|5)"), (16, 17, 18, 19)),  # JCB, Discover
    (re.compile(r"3(?:0[0-5]|[689])"), (14, 15, 16, 17, 18, 19)),  # Diners Club
    (re.compile(r"5[06-8]|6[037]"), (13, 14, 15, 16, 17, 18, 19)),  # Maestro
)


def _gb11643_valid(number: str) -> bool:
    total = sum(int(d) * w for d, w in zip(number[:17], _GB11643_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def _id_shape(number: str) -> bool:
    """Region digit and a real birth date (YYYYMMDD in 18 characters, YYMMDD in the old 15)."""
    if number[0] not in "12345678":
        return False
    birth = number[6:14] if len(number) == 18 else "19" + number[6:12]
    try:
        date(int(birth[:4]), int(birth[4:6]), int(birth[6:8]))
    except ValueError:
        return False
    return 1900 <= int(birth[:4]) <= 2099


def _luhn_valid(number: str) -> bool:
    digits = [int(d) for d in reversed(number)]
    doubled = sum(d * 2 - 9 if d > 4 else d * 2 for d in digits[1::2])
    return (sum(digits[0::2]) + doubled) % 10 == 0


def _personal_number(text: str, match: re.Match[str]) -> str | None:
    """The kind of ID or card number a digit run is, or None for an ordinary number."""
    groups = re.split(r"[ -]", match.group())
    if len(groups) > 1 and all(re.fullmatch(r"(?:19|20)\d\d", g) for g in groups):
        return None  # a list of years
    number = "".join(groups)
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[max(line_start, match.start() - 16) : match.start()]
    checked = len(number) == 18 and _gb11643_valid(number)
    if len(number) in (15, 18) and _id_shape(number) and (checked or _ID_CONTEXT.search(before)):
        return ID_NUMBER
    if not number.isdigit() or not 13 <= len(number) <= 19:
        return None
    if _CARD_CONTEXT.search(before):
        return CARD_NUMBER
    if before[-1:] in ("/", "=", "#", "?", "&", ":") or _NOT_CARD_CONTEXT.search(before):
        return None  # a URL's path or query, an order or invoice number
    if _luhn_valid(number) and any(p.match(number) and len(number) in n for p, n in _CARD_SCHEMES):
        return CARD_NUMBER
    return None


def _iban_valid(compact: str) -> bool:
    rearranged = compact[4:] + compact[:4]
    return 15 <= len(compact) <= 34 and int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _personal_numbers(text: str) -> list[tuple[int, int, str]]:
    found = []
    for match in _NUMBER_RE.finditer(text):
        kind = _personal_number(text, match)
        if kind is not None:
            found.append((match.start(), match.end(), kind))
    for match in _IBAN_RE.finditer(text):
        compact = match.group().replace(" ", "")
        # The pattern may take a following word's letters: try it without its last group too.
        if _iban_valid(compact) or (
            " " in match.group() and _iban_valid(match.group().rsplit(" ", 1)[0].replace(" ", ""))
        ):
            found.append((match.start(), match.end(), IBAN))
    return found


# -- finding and refusing -------------------------------------------------------------------------


def find_secrets(text: str, *, sensitive: bool = False) -> list[Finding]:
    """Find credentials (and, unless ``sensitive``, ID, card and account numbers) in a text.

    Args:
        text: the text about to be written.
        sensitive: the note is marked ``sensitivity: sensitive``; ID and card numbers may stay,
            credentials still may not.

    Returns:
        One finding per secret, in text order; overlapping matches are reported once.
    """
    seen, offsets = _normalize(text)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []

    def take(start: int, end: int, where: int, kind: str) -> None:
        if not any(start < e and s < end for s, e in taken):
            taken.append((start, end))
            found.append((where, kind))

    lowered = seen.lower()
    for kind, needles, pattern, check in _RULES:
        if not any(needle in lowered for needle in needles):
            continue
        for match in pattern.finditer(seen):
            if check is None or check(match):
                where = _clean_value(match)[1] if "secret" in pattern.groupindex else match.start()
                take(*match.span(), where, kind)
    if not sensitive:
        for start, end, kind in _personal_numbers(seen):
            take(start, end, start, kind)
    found.sort()
    return [
        Finding(kind, *_line_column(text, offsets[where] if offsets is not None else where))
        for where, kind in found
    ]


def check_text(text: str, *, sensitive: bool = False, where: str = "content") -> None:
    """Refuse a text that holds a secret.

    Short values work as well as whole notes: a folder (``projects/2026``, ``客户/华东``) or a
    note type passes, ``keys/AKIA...`` does not.

    Args:
        text: the text about to be written.
        sensitive: the note is marked ``sensitivity: sensitive`` (ID, card and IBAN numbers allowed).
        where: the field being checked, named in the message ("title", "body", "folder" ...).

    Raises:
        SecretRefused: naming the first finding's kind and position, never the secret.
    """
    findings = find_secrets(text, sensitive=sensitive)
    if not findings:
        return
    first = findings[0]
    article = "an" if first.kind[0] in "AEIOaeio" and not first.kind.startswith("one") else "a"
    more = f" (and {len(findings) - 1} more)" if len(findings) > 1 else ""
    if first.kind in PERSONAL_NUMBERS:
        advice = f"an {LONG_DIGITS} may stay only in a note marked `sensitivity: sensitive`: remove it or mark the note"
    else:
        advice = "remove it (Cairn never stores credentials)"
    raise SecretRefused(
        f"refused: {where} line {first.line}, column {first.column} holds {article} {first.kind}{more}; {advice}"
    )


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
