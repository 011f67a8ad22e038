import base64
import json
import random
import string
import unicodedata
import uuid

import pytest

from cairn.errors import SecretRefused
from cairn.guard import LONG_DIGITS, Finding, check_text, find_secrets

# Fake credentials, built so that each matches its rule and nothing here is a real secret.
OPENAI = "sk-proj-" + "abcdEFGH1234ijklMNOP5678qrst"
ANTHROPIC = "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe-dcBA_98"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-abcdefABCDEF"
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
PEM = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"key: {OPENAI}", "OpenAI-style API key"),
        (f"ANTHROPIC_API_KEY={ANTHROPIC}", "Anthropic API key"),
        ("legacy sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2", "OpenAI-style API key"),
        (f"push with {GITHUB}", "GitHub token"),
        (f"GITHUB_TOKEN={GITHUB_PAT}", "GitHub token"),
        (f"aws_access_key_id = {AWS}", "AWS access key id"),
        (f"slack {SLACK}", "Slack token"),
        ("Authorization: Bearer " + "abcDEF1234567890ghiJKL", "bearer token"),
        ("authorization: bearer " + "0123456789abcdef0123", "bearer token"),
        (f"cookie {JWT}", "JSON Web Token"),
        (f"Authorization: Bearer {JWT}", "JSON Web Token"),
        (PEM, "private key block"),
        ("-----BEGIN RSA " + "PRIVATE KEY-----", "private key block"),
        ("password: hunter2abc", "password"),
        ("db password = 'Tr0ub4dor&3'", "password"),
        ('{"passwd": "s3cr3tpw"}', "password"),
        ("wifi password is dragonfly", "password"),
        ("DB_PASSWORD=hunter2abc", "password"),
        ("我的密码是 hunter2abc", "password"),
        ("银行卡密码：123456", "password"),
        ("口令为abc12345，请记住", "password"),
        ("api_key: 3f9a8b7c6d5e4f3a2b1c", "API key or token"),
        ("token = ab12CD34ef56GH78", "API key or token"),
        ("client_secret: Zq8Xw7Vv6Uu5Tt4S", "API key or token"),
        ("验证码 123456", "one-time code"),
        ("您的验证码是：482913，5分钟内有效", "one-time code"),
        ("校验码为 8841", "one-time code"),
        ("动态码: 55512345", "one-time code"),
        ("Your verification code is 482913.", "one-time code"),
        ("OTP: 9921", "one-time code"),
        ("one-time code 004321", "one-time code"),
        ("2FA code: 776655", "one-time code"),
        ("身份证 110101199003077777", "Chinese resident ID number"),  # a bad check digit, but named
        ("身份证号11010119900307777X", "Chinese resident ID number"),
        ("11010519491231002X", "Chinese resident ID number"),  # the check digit is enough
        ("卡号 6222 0210 0112 3456 789", "bank card number"),
        ("card 4111-1111-1111-1111", "bank card number"),
        ("4111111111111111", "bank card number"),
    ],
)
def test_true_positives(text, kind):
    assert [f.kind for f in find_secrets(text)] == [kind]
    with pytest.raises(SecretRefused):
        check_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Deadline 2026-11-30T10:00:00+08:00, moved to 2026-12-01 09:30",
        "Course CS-101-2026 meets on Mondays",
        "课程号 20261130",
        "手机 13800138000，备用 13900139000",
        "+86 138 0013 8000",
        "see https://github.com/x/y/commit/3f2a9c1d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1",
        "sha256 https://example.org/blob/1234567890123456789abcdef0123456789abcdef0123456789abcdef0123456",
        "request id 550e8400-e29b-41d4-a716-446655440000",
        "I forgot my password again",
        "token budget is tight",
        "the token limit is 8k",
        "max tokens: 4096",
        "token: 8192",
        "password: (see 1Password)",
        "password: stored in the team vault",
        "password: <redacted>",
        "password: ********",
        "password=${DB_PASSWORD}",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "the password is required",
        "密码是生日加手机号后四位",
        "忘记密码了",
        "secretary: Alice",
        "pwd: /home/alice/project",
        "we use sk-learn (scikit-learn) for the baseline",
        "sk-learn-and-scikit-learn-are-fine",
        "task-1234 and TASK-5678",
        "the bearer of this letter",
        "Bearer authentication is described in RFC 6750",
        "验证码已发送到 13800138000",
        "timestamps 1732953600000 ms",
        "years 2023 2024 2025 2026",
        "OTP-based login",
    ],
)
def test_false_positives(text):
    assert find_secrets(text) == []
    check_text(text)


def test_message_names_kind_and_place_but_never_the_secret():
    text = f"title line\nsecond line\nclone with {GITHUB} today"
    with pytest.raises(SecretRefused) as info:
        check_text(text, where="body")
    message = info.value.message
    assert message == (
        "refused: body line 3, column 12 holds a GitHub token; remove it (Cairn never stores credentials)"
    )
    assert info.value.code == "secret_refused"


@pytest.mark.parametrize(
    "secret",
    [OPENAI, GITHUB, AWS, SLACK, JWT, "hunter2abc", "482913", "6222021001123456789"],
)
def test_message_holds_no_part_of_the_secret(secret):
    texts = [f"x {secret}", f"password: {secret}", f"验证码 {secret}", f"key={secret}"]
    for text in texts:
        try:
            check_text(text)
        except SecretRefused as exc:
            for i in range(len(secret) - 3):
                assert secret[i : i + 4] not in exc.message


def test_line_and_column_point_at_the_secret():
    text = f"# Notes\n\n- 我的密码是 hunter2abc\n- key {AWS}\n  验证码 123456"
    assert find_secrets(text) == [
        Finding("password", 3, 9),
        Finding("AWS access key id", 4, 7),
        Finding("one-time code", 5, 7),
    ]


def test_findings_are_in_text_order_and_overlaps_reported_once():
    text = f"token: {GITHUB}\n{OPENAI} then password: {OPENAI}"
    assert [(f.kind, f.line) for f in find_secrets(text)] == [
        ("GitHub token", 1),
        ("OpenAI-style API key", 2),
        ("OpenAI-style API key", 2),
    ]


def test_message_counts_further_findings():
    with pytest.raises(SecretRefused, match=r"line 1, column 1 holds an AWS access key id \(and 1 more\)"):
        check_text(f"{AWS} {GITHUB}")


def test_sensitive_lets_long_digit_runs_through_but_not_credentials():
    ids = "身份证 110101199003077777, 卡号 6222 0210 0112 3456 789"
    with pytest.raises(SecretRefused, match="sensitivity: sensitive"):
        check_text(ids)
    check_text(ids, sensitive=True)
    assert find_secrets(ids, sensitive=True) == []
    for secret in (OPENAI, GITHUB, AWS, JWT, "password: hunter2abc", "验证码 123456"):
        with pytest.raises(SecretRefused):
            check_text(f"{ids} {secret}", sensitive=True)


def test_article_in_message():
    with pytest.raises(SecretRefused, match="holds an OpenAI-style API key;"):
        check_text(OPENAI)
    with pytest.raises(SecretRefused, match="holds a one-time code;"):
        check_text("OTP 123456", where="observation")


# -- the tables: many kinds of secret, and the numbers a person meets every day ------------

RNG = random.Random(20260501)
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def rand(alphabet: str, n: int, rng: random.Random = RNG) -> str:
    """Random text; from a mixed alphabet it mixes classes, as generated keys do."""
    classes = [
        c for c in (string.ascii_lowercase, string.ascii_uppercase, string.digits) if set(c) & set(alphabet)
    ]
    while True:
        value = "".join(rng.choice(alphabet) for _ in range(n))
        if sum(bool(set(c) & set(value)) for c in classes) >= min(2, len(classes)):
            return value


def gb11643(first17: str) -> str:
    weights = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return first17 + "10X98765432"[sum(int(d) * w for d, w in zip(first17, weights, strict=True)) % 11]


def resident_id(rng: random.Random, *, valid: bool = True) -> str:
    region = rng.choice(["110105", "310104", "440305", "510107", "330106", "420111"])
    birth = f"{rng.randint(1950, 2010)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    number = gb11643(region + birth + f"{rng.randint(0, 999):03d}")
    if not valid:
        number = number[:17] + rng.choice([c for c in "0123456789X" if c != number[17]])
    return number


def luhn(prefix: str, length: int, rng: random.Random, *, valid: bool = True) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        digits = [int(d) for d in reversed(body + check)]
        ok = (sum(digits[0::2]) + sum(d * 2 - 9 if d > 4 else d * 2 for d in digits[1::2])) % 10 == 0
        if ok == valid:
            return body + check
    raise AssertionError("unreachable")


def grouped(number: str) -> str:
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


def iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    number = f"{country}{98 - int(digits) % 97:02d}{bban}"
    return " ".join(number[i : i + 4] for i in range(0, len(number), 4))


def jwt(rng: random.Random) -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    payload = json.dumps({"sub": rand(string.digits, 10, rng), "exp": 1790000000}).encode()
    header = part(b'{"alg":"HS256","typ":"JWT"}')
    return f"{header}.{part(payload)}.{rand(URLSAFE, 43, rng)}"


def pem(label: str, rng: random.Random) -> str:
    lines = [rand(B64, 64, rng) for _ in range(3)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def secret_table() -> list[tuple[str, str]]:
    """(name, text) pairs, each a realistic note line holding one kind of secret."""
    r = random.Random(7)
    aws_secret = rand(B64, 40, r)
    rows = {
        "AWS access key id": f"aws_access_key_id = AKIA{rand(string.ascii_uppercase + '234567', 16, r)}",
        "AWS temporary key id": f"creds ASIA{rand(string.ascii_uppercase + '234567', 16, r)}",
        "AWS secret key (env)": f"aws_secret_access_key = {aws_secret}",
        "AWS secret key (prose)": f"the AWS secret key is {aws_secret}",
        "GitHub ghp_": f"push with ghp_{rand(ALNUM, 36, r)}",
        "GitHub gho_": f"oauth gho_{rand(ALNUM, 36, r)}",
        "GitHub github_pat_": f"GH_PAT=github_pat_11{rand(ALNUM, 20, r)}_{rand(ALNUM, 59, r)}",
        "OpenAI sk-": f"OPENAI_API_KEY=sk-{rand(ALNUM, 48, r)}",
        "OpenAI sk-proj-": f"new key sk-proj-{rand(URLSAFE, 74, r)}T3BlbkFJ{rand(URLSAFE, 74, r)}",
        "Anthropic sk-ant-": f"claude key sk-ant-api03-{rand(URLSAFE, 93, r)}AA",
        "Google API key": f"maps key AIzaSy{rand(URLSAFE, 33, r)}",
        "Google OAuth client secret": f"client_secret GOCSPX-{rand(URLSAFE, 28, r)}",
        "Slack bot token": f"slack xoxb-{rand(string.digits, 12, r)}-{rand(string.digits, 13, r)}-{rand(ALNUM, 24, r)}",
        "Slack user token": f"xoxp-{rand(string.digits, 12, r)}-{rand(string.digits, 12, r)}-{rand(ALNUM, 32, r)}",
        "Slack webhook": "alerts go to https://hooks.slack.com/services/T"
        + rand(string.ascii_uppercase + string.digits, 8, r)
        + "/B"
        + rand(string.ascii_uppercase + string.digits, 10, r)
        + "/"
        + rand(ALNUM, 24, r),
        "Discord webhook": f"https://discord.com/api/webhooks/{rand(string.digits, 18, r)}/{rand(URLSAFE, 68, r)}",
        "WeCom webhook": f"企业微信机器人 https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key={rand(HEX, 8, r)}-{rand(HEX, 4, r)}-{rand(HEX, 4, r)}-{rand(HEX, 4, r)}-{rand(HEX, 12, r)}",
        "DingTalk webhook": f"钉钉 https://oapi.dingtalk.com/robot/send?access_token={rand(HEX, 64, r)}",
        "Stripe live secret": f"stripe sk_live_{rand(ALNUM, 24, r)}",
        "Stripe restricted key": f"rk_live_{rand(ALNUM, 24, r)}",
        "Twilio API key": f"twilio SK{rand(HEX, 32, r)}",
        "Twilio auth token": f"TWILIO_AUTH_TOKEN={rand(HEX, 32, r)}",
        "SendGrid key": f"SG.{rand(URLSAFE, 22, r)}.{rand(URLSAFE, 43, r)}",
        "npm token": f"//registry.npmjs.org/:_authToken=npm_{rand(ALNUM, 36, r)}",
        "PyPI token": f"password = pypi-AgEIcHlwaS5vcmc{rand(URLSAFE, 60, r)}",
        "GitLab token": f"glpat-{rand(URLSAFE, 20, r)}",
        "Hugging Face token": f"HF token hf_{rand(ALNUM, 34, r)}",
        "Alibaba Cloud AccessKey": f"阿里云 LTAI{rand(ALNUM, 20, r)}",
        "Telegram bot token": f"bot {rand(string.digits, 10, r)}:AA{rand(URLSAFE, 33, r)}",
        "JWT": f"cookie session={jwt(r)}",
        "RSA private key": pem("RSA PRIVATE KEY", r),
        "OpenSSH private key": pem("OPENSSH PRIVATE KEY", r),
        "EC private key": pem("EC PRIVATE KEY", r),
        "GCP service account JSON": '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
        + rand(B64, 64, r)
        + '\\n-----END PRIVATE KEY-----\\n"}',
        "Azure storage connection string": "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey="
        + rand(B64, 86, r)
        + "==;EndpointSuffix=core.windows.net",
        "Azure client secret": f"AZURE_CLIENT_SECRET={rand(ALNUM + '~.', 40, r)}",
        "bearer token": f"curl -H 'Authorization: Bearer {rand(URLSAFE, 40, r)}'",
        "basic auth header": "Authorization: Basic " + base64.b64encode(b"deploy:Xk82-pq1vZ").decode(),
        "basic-auth URL": "https://alice:Pa55w0rd!@intranet.example.com/wiki",
        "postgres URL": "postgres://admin:S3cr3tPass@db/x",
        "mysql URL": "mysql://root:hunter2@host",
        "mongodb+srv URL": f"mongodb+srv://app:{rand(ALNUM, 16, r)}@cluster0.ab1cd.mongodb.net/prod",
        "redis URL": "redis://:p4ssw0rdXyz@cache.internal:6379/0",
        "amqp URL": "amqp://guest:R4bb1tPw@mq:5672/",
        "password (colon)": "password: hunter2abc",
        "password (prose)": "the SSH password for prod is Tr0ub4dor&3",
        "pw": "pw: hunter2x",
        "passphrase": 'passphrase = "correct horse battery staple 9"',
        "密码": "我的邮箱密码：Abc12345",
        "口令": "服务器口令为 Zx9kQ2wp",
        "支付密码": "支付密码 583920",
        "门禁密码": "门禁密码 4821#",
        "PIN": "PIN: 4821",
        "PIN码": "银行卡PIN码 0392",
        "CVV": "visa ending 4242, CVV: 737",
        "验证码": "短信验证码 482913，五分钟内有效",
        "OTP (English)": "Your verification code is 113355",
        "resident ID (valid check digit)": f"身份证 {resident_id(r)}",
        "resident ID, no context": f"住址见户口本，号码 {resident_id(r)}",
        "Visa card": f"card {luhn('4', 16, r)}",
        "Mastercard grouped": grouped(luhn("5", 16, r)),
        "UnionPay 19 digits": f"工资卡 {luhn('6217', 19, r)}",
        "Amex": f"amex {luhn('37', 15, r)}",
        "IBAN": f"wire to {iban('DE', '370400440532013000')}",
        "token with a zero-width space": f"clone with ghp_{rand(ALNUM, 18, r)}\u200b{rand(ALNUM, 18, r)}",
        "full-width key": "ＡＫＩＡ" + rand(string.ascii_uppercase, 16, r),
    }
    return list(rows.items())


SECRET_TABLE = secret_table()


def ordinary_notes() -> list[str]:
    """At least 200 notes a person writes every day, many full of long numbers."""
    r = random.Random(11)
    digits = string.digits

    def num(n: int, first: str = "123456789") -> str:
        return r.choice(first) + "".join(r.choice(digits) for _ in range(n - 1))

    makers = [
        lambda: f"淘宝订单 {num(19, '1234')} 已发货",
        lambda: f"{num(19, '1234')} 退款中，等商家处理",  # a bare order number
        lambda: f"京东订单号：{num(12)}，明天送达",
        lambda: f"nice thread https://x.com/someone/status/{num(19, '1')}",
        lambda: f"tweet id {num(19, '1')}",
        lambda: f"发票号码 {num(20, '0123')}",
        lambda: f"invoice {num(20)} paid",
        lambda: f"顺丰运单 SF{num(13)}",
        lambda: f"中通快递 {num(14, '7')}",
        lambda: f"UPS 1Z{rand(string.ascii_uppercase + digits, 16, r)}",
        lambda: f"USPS tracking {num(22, '9')}",
        lambda: f"fixed in commit {''.join(r.choice(HEX) for _ in range(40))}",
        lambda: f"git show {''.join(r.choice(HEX) for _ in range(7))}",
        lambda: f"sha256: {''.join(r.choice(HEX) for _ in range(64))}",
        lambda: f"request id {uuid.UUID(int=r.getrandbits(128), version=4)}",
        lambda: f"手机 1{r.choice('3578')}{num(9, digits)}",
        lambda: f"电话 +86 1{r.choice('3578')}{num(1, digits)} {num(4, digits)} {num(4, digits)}",
        lambda: f"call (415) 555-{num(4, digits)}",
        lambda: f"office +44 20 7946 {num(4, digits)}",
        lambda: f"上海市浦东新区世纪大道{r.randint(1, 2000)}号{r.randint(1, 40)}楼",
        lambda: f"{r.randint(1, 999)} Baker Street, London NW1 6XE",
        lambda: f"upgraded to v{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 99)}",
        lambda: f"Python 3.{r.randint(8, 13)}.{r.randint(0, 12)} on the server",
        lambda: f"ISBN 978-7-{num(3)}-{num(5)}-{r.choice(digits)}",
        lambda: f"书号 978{num(10, digits)}",
        lambda: (
            f"deadline 2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:00:00+08:00"
        ),
        lambda: f"价格 ¥{r.randint(10, 9999)}.{r.randint(0, 99):02d}",
        lambda: f"paid ${r.randint(1, 999)}.{r.randint(0, 99):02d} for the tickets",
        lambda: r.choice(
            [
                "明天下午三点和王经理开会，带上季度报表",
                "妈妈的生日是5月3日，记得订蛋糕",
                "周末去杭州，住西湖边的民宿",
                "孩子的家长会改到周四晚上七点",
                "体检报告：血压正常，胆固醇略高",
                "咖啡店的新品不错，燕麦拿铁少糖",
                "快递柜取件码 5-2-3011",
                "车牌 沪A·12345 年检到期",
                "高铁 G1234 次 08车12F",
                "房租每月 4500，押一付三",
            ]
        ),
        lambda: r.choice(
            [
                "def add(a, b):\n    return a + b",
                "SELECT id, name FROM users WHERE created_at > '2026-01-01' LIMIT 50;",
                'password = os.environ["DB_PASSWORD"]',
                "token = get_token(session)",
                "for (let i = 0; i < 10; i++) { total += prices[i]; }",
                "docker run -p 8080:80 nginx:1.27",
                "git push origin main",
                "api_key: ${OPENAI_API_KEY}",
                "const maxTokens = 4096;",
                "curl https://api.example.com/v1/items?page=2&limit=100",
            ]
        ),
        lambda: f"timestamp {num(13, '1')} ms",
        lambda: f"QQ {num(r.randint(6, 10))}",
        lambda: (
            f"server 10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}:{r.randint(1024, 65535)}"
        ),
        lambda: f"MAC 3c:22:fb:{r.randint(10, 99)}:{r.randint(10, 99)}:0a",
        lambda: f"统一社会信用代码 91310000MA1FL{num(4, digits)}X",
        lambda: f"支付宝交易号 {num(28, '2')}",
        lambda: f"微信支付单号 42000{num(23, digits)}",
        lambda: f"编号 {resident_id(r, valid=False)}",  # ID-shaped, wrong check digit, no ID word
        lambda: f"{resident_id(r, valid=False)} 是会员号",
        lambda: f"批次 {luhn('4', 16, r, valid=False)}",  # card-shaped, Luhn fails
        lambda: f"{luhn('62', 19, r, valid=False)} 物流单",
        lambda: f"population {r.randint(1_000_000, 99_000_000):,}",
        lambda: f"the password reset link is in my inbox ({r.randint(2, 9)} emails)",
        lambda: f"token budget {r.randint(2, 128)}k per call",
        lambda: f"PIN the version to {r.randint(1, 5)}.{r.randint(0, 9)}",
        lambda: f"pinned 'numpy<{r.randint(1, 2)}.{r.randint(0, 9)}'",
        lambda: f"验证码已发送到 1{r.choice('3578')}{num(9, digits)}",
        lambda: f"folder projects/{r.randint(2020, 2030)}",
        lambda: r.choice(
            ["客户/华东", "客户/华南/深圳", "work/acme-corp", "archive/2019/Q4", "课程/数据结构"]
        ),
        lambda: f"meeting room B{r.randint(1, 9)}-{r.randint(100, 999)}",
        lambda: f"years {' '.join(str(y) for y in range(r.randint(2015, 2020), 2027))}",
        lambda: f"设备序列号 {num(16)}",  # bare 16 digits: a few pass Luhn and look like a card
    ]
    notes = []
    for i in range(5):
        notes += [make() for make in makers]
        if len(notes) >= 250 and i >= 3:
            break
    return notes


ORDINARY = ordinary_notes()


def test_the_secret_table_has_enough_kinds() -> None:
    assert len(SECRET_TABLE) >= 40
    assert len({text for _, text in SECRET_TABLE}) == len(SECRET_TABLE)


@pytest.mark.parametrize(("name", "text"), SECRET_TABLE, ids=[name for name, _ in SECRET_TABLE])
def test_every_kind_of_secret_is_refused(name: str, text: str) -> None:
    findings = find_secrets(text)
    assert findings, f"{name} got through: {text!r}"
    with pytest.raises(SecretRefused) as info:
        check_text(text, where="body")
    assert "line " in info.value.message and "column " in info.value.message


def test_ordinary_notes_are_almost_never_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert len(ORDINARY) >= 200
    refused = [(note, [f.kind for f in find_secrets(note)]) for note in ORDINARY if find_secrets(note)]
    with capsys.disabled():
        print(f"\n{len(refused)} of {len(ORDINARY)} ordinary notes refused")
        for note, kinds in refused:
            print(f"  {kinds}: {note!r}")
    assert len(refused) / len(ORDINARY) < 0.02


def test_numbers_are_told_by_their_checksums_not_their_length() -> None:
    r = random.Random(3)
    for _ in range(200):
        assert [f.kind for f in find_secrets(resident_id(r))] == ["Chinese resident ID number"]
        assert find_secrets(f"会员号 {resident_id(r, valid=False)}") == []
        assert [f.kind for f in find_secrets(luhn("4", 16, r))] == ["bank card number"]
        assert find_secrets(luhn("4", 16, r, valid=False)) == []
    for order in ("3190587245691038376", "1790000000000000000", "04400191112012345678"):
        assert find_secrets(f"订单 {order}") == [] and find_secrets(order) == []


@pytest.mark.parametrize(
    "value",
    [
        "projects/2026",
        "客户/华东",
        "客户/华南/深圳",
        "notes/2026-05",
        "work/acme-corp",
        "archive/2019/Q4",
        "meeting",
        "decision",
        "person",
        "课程",
        "reading-list",
        "sk-learn",
        "tokens",
        "passwords",
    ],
)
def test_ordinary_folder_and_type_values_pass(value: str) -> None:
    check_text(value, where="folder")
    check_text(value, where="type")


@pytest.mark.parametrize(
    "value",
    [
        "keys/AKIA" + "IOSFODNN7EXAMPLE",
        "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
        "sk-" + "Ab3dEf6hIj9kLm2nOp5qRs8t",
    ],
)
def test_a_key_in_a_folder_or_type_is_refused(value: str) -> None:
    with pytest.raises(SecretRefused, match="refused: folder line 1"):
        check_text(value, where="folder")


def test_invisible_characters_do_not_hide_a_token_and_columns_stay_true() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8" + "\u200b\u2060" + "i9J0k1L2m3N4o5P6q7R8"
    text = f"第一行\n\u200b\u200b克隆用 {token}"
    assert find_secrets(text) == [Finding("GitHub token", 2, 7)]  # counted in the text as given
    assert find_secrets("soft\u00adhyphen and zero\u200bwidth in prose") == []


def test_every_format_character_in_the_bmp_is_treated_as_invisible() -> None:
    from cairn.guard import _INVISIBLE_RE

    missing = [
        hex(c)
        for c in range(0x10000)
        if unicodedata.category(chr(c)) == "Cf" and not _INVISIBLE_RE.match(chr(c))
    ]
    assert missing == []


def test_personal_numbers_say_how_to_keep_them() -> None:
    with pytest.raises(SecretRefused) as info:
        check_text(f"身份证 {resident_id(random.Random(1))}", where="observation 1")
    message = info.value.message
    assert message.startswith("refused: observation 1 line 1, column 5 holds a Chinese resident ID number;")
    assert "`sensitivity: sensitive`" in message and LONG_DIGITS in message


def test_the_cheap_substring_gates_never_skip_a_rule_that_would_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cairn import guard

    texts = [text for _, text in SECRET_TABLE] + ORDINARY
    gated = [find_secrets(text) for text in texts]
    monkeypatch.setattr(guard, "_RULES", [(k, ("",), p, c) for k, _, p, c in guard._RULES])
    assert [find_secrets(text) for text in texts] == gated
