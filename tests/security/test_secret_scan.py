"""Secrets kept out (issue 46 item 4): every text field of every kind is scanned on write.

The fake keys are built here from parts, so no key-shaped literal is ever committed (and
none of them is a real credential).
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, Result, make, sample
from xbrain.secretscan import scan_text

Run = Callable[..., Result]
SKILL = EXAMPLES / "skills" / "deploy-check"

FAKE_KEYS = {
    "aws": "AKIA" + "QX7Z" * 4,
    "github": "gh" + "p_" + "a1B2c3D4" * 4 + "e5F6",
    "openai": "sk-" + "proj-" + "Xy9Q" * 12,
    "stripe": "sk" + "_live_" + "4eC39HqLyjWD" * 2,
    "slack": "xo" + "xb-" + "1234567890-1234567890123-" + "abcdefghijklmnop" * 2,
}
RESOURCE_FIELDS = ["title", "text", "summary", "purpose", "useWhen", "limitations"]
ENTRY_FIELDS = ["name", "description", "body", "queries", "keywords", "oneLiner"]


def _git(store: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(store), *args], capture_output=True, text=True, check=True
    ).stdout


def _commits(store: Path) -> int:
    if not (store / ".git").exists():
        return 0
    return int(_git(store, "rev-list", "--count", "--all") or 0)


def _refused(result: Result, field: str, detector: str, key: str) -> None:
    assert result.code == 4, result.stderr
    assert f'"{field}' in result.stderr and detector in result.stderr
    assert key not in result.stderr and key not in result.stdout
    assert len(result.stderr.strip().splitlines()) == 1


def _entry(**changes: Any) -> dict[str, Any]:
    return {"kind": "rule", "name": "tabs", "body": "Indent with tabs.", **changes}


def _value(field: str, text: str) -> Any:
    return [text] if field in {"useWhen", "limitations", "queries", "keywords"} else text


@pytest.mark.parametrize("detector", sorted(FAKE_KEYS))
def test_a_fake_key_is_refused_in_every_resource_and_entry_field(
    xb_proc: Run, store_dir: Path, detector: str
) -> None:
    key = FAKE_KEYS[detector]
    assert xb_proc("init").code == 0
    before = _commits(store_dir)
    for field in RESOURCE_FIELDS:
        bad = sample(**{field: _value(field, f"my key: {key} (do not share)")})
        _refused(xb_proc("put", "-", input=bad), field, detector, key)
    for field in ENTRY_FIELDS:
        bad = _entry(**{field: _value(field, f"token {key}")})
        _refused(xb_proc("entry", "put", "-", input=bad), field, detector, key)
    assert _commits(store_dir) == before
    assert key not in _git(store_dir, "log", "--all", "-p")


@pytest.mark.parametrize("detector", sorted(FAKE_KEYS))
def test_a_fake_key_is_refused_in_a_skill_md_and_a_component_file(
    xb_proc: Run, store_dir: Path, tmp_path: Path, detector: str
) -> None:
    key = FAKE_KEYS[detector]
    assert xb_proc("init").code == 0
    before = _commits(store_dir)
    for name in ["SKILL.md", "scripts/check.sh", "references/rollback.md"]:
        work = tmp_path / "work" / name.replace("/", "-")
        shutil.copytree(SKILL, work)
        target = work / name
        target.write_text(target.read_text() + f"\nexport KEY={key}\n")
        _refused(xb_proc("skill", "save", str(work)), name, detector, key)
    assert _commits(store_dir) == before


def test_allow_secret_lets_one_write_through_and_the_commit_says_so(
    xb_proc: Run, store_dir: Path
) -> None:
    key = FAKE_KEYS["aws"]
    resource = sample(text=f"the staging key is {key}")
    _refused(xb_proc("put", "-", input=resource), "text", "aws", key)
    wrong = xb_proc("put", "-", "--allow-secret", "github", input=resource)
    assert wrong.code == 4
    unknown = xb_proc("put", "-", "--allow-secret", "nonsense", input=resource)
    assert unknown.code == 2
    allowed = xb_proc("put", "-", "--allow-secret", "aws", input=resource)
    assert allowed.code == 0, allowed.stderr
    message = _git(store_dir, "log", "-1", "--format=%B")
    assert "Xbrain-Allowed-Secret: aws in text" in message and key not in message
    # an edit that keeps the allowed text needs no second override; a new secret does
    edited = {**resource, "title": "Edited", "updatedAt": "2026-10-08T00:00:00.000Z"}
    assert xb_proc("put", "-", input=edited).json["updated"] == 1
    # the next write is not allowed anything
    other = make("other", summary=f"and {key}")
    _refused(xb_proc("put", "-", input=other), "summary", "aws", key)


def _non_secrets() -> list[str]:
    """200 high-entropy strings that are not credentials: hashes, UUIDs, base64 images."""
    values: list[str] = []
    for n in range(50):
        seed = f"seed-{n}".encode()
        values += [
            hashlib.sha256(seed).hexdigest(),
            hashlib.sha1(seed).hexdigest(),
            str(uuid.UUID(bytes=hashlib.md5(seed).digest())),
            "data:image/png;base64," + base64.b64encode(hashlib.sha512(seed).digest() * 8).decode(),
        ]
    return values


def test_two_hundred_high_entropy_non_secrets_are_accepted(
    xb_proc: Run, store_dir: Path, tmp_path: Path
) -> None:
    values = _non_secrets()
    assert len(values) == 200 and [v for v in values if scan_text(v)] == []
    batch = [make(f"r{n}", text=f"digest {value}") for n, value in enumerate(values)]
    put = xb_proc("put", "-", input=batch)
    assert put.code == 0, put.stderr
    assert put.json["added"] == 200
    entry = _entry(body="\n".join(values))
    assert xb_proc("entry", "put", "-", input=entry).code == 0
    work = tmp_path / "work"
    shutil.copytree(SKILL, work)
    (work / "references" / "hashes.md").write_text("\n".join(values) + "\n")
    saved = xb_proc("skill", "save", str(work))
    assert saved.code == 0, saved.stderr


def test_providers_documentation_keys_are_not_secrets() -> None:
    assert scan_text("aws_access_key_id = " + "AKIA" + "IOSFODNN7" + "EXAMPLE") == []
    assert scan_text("aws_access_key_id = " + FAKE_KEYS["aws"]) == ["aws"]


def test_a_crafted_long_line_is_scanned_in_bounded_time() -> None:
    # detect-secrets' own patterns are unbounded; the scanner windows long lines
    assert scan_text("eyJ" + "a" * 200_000 + "." + "eyJa." * 20_000) == []
    assert scan_text("x" * 100_000 + FAKE_KEYS["github"]) == ["github"]


def test_schema_of_refusals_is_the_usual_error(xb: Run) -> None:
    result = xb("put", "-", input=json.dumps(sample(text=FAKE_KEYS["stripe"])))
    assert result.code == 4 and "stripe" in result.stderr


def test_every_other_write_is_scanned_and_takes_allow_secret_too(
    xb_proc: Run, store_dir: Path
) -> None:
    key = FAKE_KEYS["github"]
    first = xb_proc("put", "-", "--allow-secret", "github", input=sample(text=f"token {key}"))
    assert first.code == 0, first.stderr
    rid = first.json["results"][0]["id"]
    old = first.json["commit"]
    clean = sample(text="rotated", updatedAt="2026-10-08T00:00:00.000Z")
    assert xb_proc("put", "-", input=clean).json["updated"] == 1
    # restore brings the old text back: a new write of it, scanned like any other
    _refused(xb_proc("restore", rid, "--at", old), "text", "github", key)
    restored = xb_proc("restore", rid, "--at", old, "--allow-secret", "github")
    assert restored.code == 0, restored.stderr
    assert "Xbrain-Allowed-Secret: github in text" in _git(store_dir, "log", "-1", "--format=%B")


def _fresh_process(code: str) -> list[Any]:
    """What ``code`` prints (JSON) in a fresh interpreter handed ``FAKE_KEYS``: nothing
    of this process's imports."""
    run = subprocess.run(
        [sys.executable, "-c", code, json.dumps(FAKE_KEYS)], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    result: list[Any] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize("requests_first", [False, True])
def test_the_detectors_load_without_requests_and_leave_it_importable(
    requests_first: bool,
) -> None:
    """detect-secrets loads with a stand-in for ``requests`` (only its verifiers, never
    called, use it): the detectors still find every key, and ``requests`` is the real
    one afterwards — or all along, when it was loaded first."""
    code = (
        "import json, sys\n"
        + ("import requests\n" if requests_first else "")
        + "from xbrain.secretscan import scan_text\n"
        "keys = json.loads(sys.argv[1])\n"
        "found = {name: scan_text(f'x = {key}') for name, key in keys.items()}\n"
        "loaded = 'requests' in sys.modules\n"
        "import requests, detect_secrets.plugins.aws as aws\n"
        "print(json.dumps([found, loaded, hasattr(requests, 'get'), hasattr(aws.requests, 'get')]))\n"
    )
    found, loaded, real, plugins = _fresh_process(code)
    assert found == {name: [name] for name in FAKE_KEYS}
    assert loaded == requests_first and real
    assert plugins == requests_first  # the plugins hold the stand-in unless it was there


def test_a_detector_that_needs_more_of_requests_loads_with_the_real_one() -> None:
    """A detect-secrets plugin that uses more of ``requests`` while it loads (IBM's
    annotates with ``requests.Response``) makes the stand-in fail: every detector is then
    loaded with the real ``requests``, none is lost."""
    code = (
        "import json, sys\n"
        "from xbrain import secretscan\n"
        "secretscan._PLUGINS['ibm'] = ('ibm_cloud_iam', 'IbmCloudIamDetector')\n"
        "keys = json.loads(sys.argv[1])\n"
        "found = {name: secretscan.scan_text(f'x = {key}') for name, key in keys.items()}\n"
        "again = secretscan.scan_text('x = ' + keys['stripe'])\n"
        "import detect_secrets.plugins.aws as aws\n"
        "print(json.dumps([found, again, len(secretscan._LOADED), hasattr(aws.requests, 'get')]))\n"
    )
    found, again, loaded, real = _fresh_process(code)
    assert found == {name: [name] for name in FAKE_KEYS} and again == ["stripe"]
    assert loaded == 19 and real  # all 18 and IBM's, beside the real requests
