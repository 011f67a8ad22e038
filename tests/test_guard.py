import pytest

from cairn.errors import SecretRefused
from cairn.guard import Finding, check_text, find_secrets

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
        (f"ANTHROPIC_API_KEY={ANTHROPIC}", "OpenAI-style API key"),
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
        ("身份证 110101199003077777", "long digit run (ID or bank card number)"),
        ("身份证号11010119900307777X", "long digit run (ID or bank card number)"),
        ("卡号 6222 0210 0112 3456 789", "long digit run (ID or bank card number)"),
        ("card 4111-1111-1111-1111", "long digit run (ID or bank card number)"),
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
