"""Credentials are refused on every write path of the Memory service, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cairn import Memory, SecretRefused

KEY = "sk-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"


def files(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes() for p in vault.rglob("*.md")}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"title": f"key {KEY}"},
        {"title": "t", "body": f"export OPENAI_API_KEY={KEY}"},
        {"title": "t", "observations": [f"[cred] the key is {KEY}"]},
        {"title": "t", "tags": [KEY]},
        {"title": "t", "fields": {"note": KEY}},
        {"title": "t", "observations": ["[id] 身份证 110101199003077777"]},
    ],
)
def test_write_refuses_secrets_without_echoing_them(memory: Memory, vault: Path, kwargs: dict) -> None:
    with pytest.raises(SecretRefused) as caught:
        memory.write(**kwargs)
    assert KEY not in caught.value.message and "110101199003077777" not in caught.value.message
    assert KEY[:8] not in caught.value.message
    assert files(vault) == {}


def test_append_and_edit_refuse_secrets_and_change_nothing(memory: Memory, vault: Path) -> None:
    note = memory.write("Accounts", observations=["[site] example.org"])
    before = files(vault)
    with pytest.raises(SecretRefused, match="GitHub token"):
        memory.append(note.permalink, "[token] ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
    with pytest.raises(SecretRefused, match="password"):
        memory.edit(note.permalink, "example.org", "example.org password: hunter2abc")
    with pytest.raises(SecretRefused, match="one-time code"):
        memory.append(note.permalink, "[login] 验证码 493021")
    assert files(vault) == before


def test_an_edit_that_completes_a_secret_with_the_text_around_it_is_refused(
    memory: Memory, vault: Path
) -> None:
    note = memory.write("Keys", observations=["[fact] key is sk-proj-PLACEHOLDER"])
    before = files(vault)
    with pytest.raises(SecretRefused, match="API key"):
        memory.edit(note.permalink, "PLACEHOLDER", KEY[3:])  # harmless alone, a key once in place
    assert files(vault) == before


def test_a_delete_reason_holding_a_secret_is_refused_and_nothing_moves(memory: Memory, vault: Path) -> None:
    note = memory.write("Bank", observations=["[site] example.org"])
    before = files(vault)
    with pytest.raises(SecretRefused, match="password"):
        memory.delete(note.permalink, reason="old, password: hunter2abc")
    assert files(vault) == before


def test_long_numbers_need_a_sensitive_note(memory: Memory) -> None:
    note = memory.write("ID card", sensitivity="sensitive", observations=["[id] 110101199003077777"])
    assert note.sensitive
    memory.append(note.permalink, "[card] 6222 0210 0112 3456 789")
    with pytest.raises(SecretRefused):
        memory.append(note.permalink, f"[key] {KEY}")  # sensitive notes still never hold keys


# The six kinds the probe got through, and a few more it named.
MISSED = [
    "postgres://admin:S3cr3tPass@db/x",
    "mysql://root:hunter2@host",
    "maps key AIzaSy" + "Bq3kX9vR2mN7pL4tW8zY1cF6hJ0dG5sAe",
    "https://hooks.slack.com/services/" + "T0A1B2C3D/B4E5F6G7H8/abcDEF123ghiJKL456mnoPQR",
    "the AWS secret key is " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "the SSH password for prod is Tr0ub4dor&3",
    "pw: hunter2x",
    "PIN: 4821",
    "门禁密码 4821#",
    "token ghp_" + "a1B2c3D4e5F6g7H8\u200bi9J0k1L2m3N4o5P6q7R8",
]


@pytest.mark.parametrize("secret", MISSED)
def test_secrets_the_probe_got_through_are_refused_on_every_write_path(
    memory: Memory, vault: Path, secret: str
) -> None:
    with pytest.raises(SecretRefused):
        memory.write("Probe", body=secret)
    note = memory.write("Probe", observations=["[fact] PLACEHOLDER"])
    before = files(vault)
    with pytest.raises(SecretRefused):
        memory.append(note.permalink, f"[fact] {secret}")
    with pytest.raises(SecretRefused):
        memory.edit(note.permalink, "PLACEHOLDER", secret)
    assert files(vault) == before


@pytest.mark.parametrize(
    "line",
    [
        "[order] 淘宝订单 3190587245691038376 已签收",
        "[tweet] https://x.com/someone/status/1790000000000000000",
        "[invoice] 发票号码 04400191112012345678",
        "[order] 3190587245691038376",
    ],
)
def test_everyday_long_numbers_are_written(memory: Memory, line: str) -> None:
    note = memory.write("Receipts", observations=[line])
    assert [o.content for o in memory.read(note.permalink).observations] == [line.split("] ", 1)[1]]
