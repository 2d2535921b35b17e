"""A misbehaving command adapter never produces a confirmation, and cannot escape."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Result, make, sample
from xbrain.kinds.model import normalize_resource, resource_id
from xbrain.providers.config import load_provider_config
from xbrain.schemas import schema_errors

Run = Callable[..., Result]
ADAPTER = ROOT / "examples" / "mock_adapter.py"

ECHO = "import json, sys\nrequest = json.loads(sys.stdin.readline())\n"
FAULTS = {
    "timeout": "import time\ntime.sleep(30)\n",
    "huge_output": "import sys\nsys.stdin.readline()\nsys.stdout.write('x' * (1024 * 1024 + 10))\n",
    "invalid_json": "import sys\nsys.stdin.readline()\nsys.stdout.write('{not json')\n",
    "two_documents": ECHO
    + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': request['id'], 'revision': request['revision']}))\nprint('{}')\n",
    "wrong_id": ECHO
    + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': 'resource_' + '0' * 64, 'revision': request['revision']}))\n",
    "wrong_revision": ECHO
    + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': request['id'], 'revision': '0' * 64}))\n",
    "not_ok": ECHO
    + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': False, 'code': 'denied'}))\n",
    "wrong_protocol": ECHO
    + "print(json.dumps({'protocol': 'other', 'ok': True, 'id': request['id'], 'revision': request['revision']}))\n",
    "crash_mid_write": ECHO
    + 'import os, sys\nsys.stdout.write(\'{"protocol": "xstash.memory.v1", "ok": tr\')\nsys.stdout.flush()\nos.kill(os.getpid(), 9)\n',
    "nonzero_exit": ECHO
    + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': request['id'], 'revision': request['revision']}))\nsys.exit(1)\n",
    "stderr_noise": ECHO + "sys.stderr.write('SECRET-DIAGNOSTIC ' * 100000)\nsys.exit(1)\n",
    "closes_stdin": "import os\nos.close(0)\nimport time\ntime.sleep(0.5)\n",
}
MESSAGES = {
    "timeout": "Memory adapter timed out; sync not confirmed.",
    "huge_output": "Memory adapter response exceeds 1 MiB.",
    "invalid_json": "Memory adapter returned invalid JSON.",
    "two_documents": "Memory adapter returned invalid JSON.",
    "wrong_id": "Memory adapter acknowledgement does not match the resource/revision.",
    "wrong_revision": "Memory adapter acknowledgement does not match the resource/revision.",
    "not_ok": "Memory adapter did not confirm the operation.",
    "wrong_protocol": "Memory adapter did not confirm the operation.",
    "crash_mid_write": "Memory adapter failed; sync not confirmed.",
    "nonzero_exit": "Memory adapter failed; sync not confirmed.",
    "stderr_noise": "Memory adapter failed; sync not confirmed.",
}


def command_config(tmp_path: Path, command: list[str], namespace: str, **extra: Any) -> str:
    """A personal command-provider config file running ``command``."""
    cfg = tmp_path / "provider.json"
    value = {"kind": "command", "scope": "personal", "namespace": namespace, "command": command}
    cfg.write_text(json.dumps({**value, **extra}))
    return str(cfg)


def adapter_config(tmp_path: Path, body: str, **extra: Any) -> str:
    script = tmp_path / "adapter.py"
    script.write_text(body)
    return command_config(
        tmp_path, [sys.executable, str(script)], "faults", **{"timeoutMs": 1000, **extra}
    )


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_never_confirms(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path, fault: str
) -> None:
    xb("put", json_file([make("a"), make("b")]))
    cfg = adapter_config(tmp_path, FAULTS[fault])
    started = time.monotonic()
    result = xb("sync", "--all", "--provider-config", cfg)
    assert result.code == 1, result.stderr
    assert result.json["confirmed"] == 0 and result.json["remoteSync"] == "incomplete"
    errors = {failure["error"] for failure in result.json["failures"]}
    if fault in MESSAGES:
        assert errors == {MESSAGES[fault]}
    else:  # closing stdin early may also end as a plain failure
        assert errors <= {
            "Memory adapter closed its input.",
            "Memory adapter failed; sync not confirmed.",
            "Memory adapter returned invalid JSON.",
        }
    key = load_provider_config(Path(cfg), store_dir).key
    assert json.loads((store_dir / "receipts" / f"{key}.json").read_text()) == {}
    assert "SECRET-DIAGNOSTIC" not in result.stdout + result.stderr
    assert time.monotonic() - started < 20


def test_long_lived_child_is_killed(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    body = (
        ECHO
        + "import subprocess\n"
        + "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        + f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        + "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': request['id'], 'revision': request['revision']}))\n"
    )
    xb("put", json_file(make("a")))
    result = xb("sync", "--all", "--provider-config", adapter_config(tmp_path, body))
    # the child keeps stdout open, so the reply never completes: no confirmation
    assert result.json["confirmed"] == 0
    assert result.json["failures"][0]["error"] == "Memory adapter timed out; sync not confirmed."
    child = int(pidfile.read_text())
    time.sleep(0.2)
    assert not alive(child)


def alive(pid: int) -> bool:
    """Running (a zombie left for a non-reaping init counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not status.exists() or "\nState:\tZ" not in status.read_text()


def test_shell_text_stays_inert(xb: Run, json_file: Callable[[Any], str], tmp_path: Path) -> None:
    victim = tmp_path / "pwned"
    evil = f"$(touch {victim}) `touch {victim}` ; touch {victim}"
    xb("put", json_file(sample(title=evil, text=evil)))
    data = tmp_path / "remote.json"
    cfg = command_config(tmp_path, [sys.executable, str(ADAPTER), "--data", str(data)], "n")
    assert xb("sync", "--all", "--provider-config", cfg).json["confirmed"] == 1
    assert xb("search", "touch", "--provider-config", cfg).code == 0
    assert not victim.exists()
    stored = json.loads(data.read_text())["n"]
    assert stored[resource_id("web", "fictional-dialog-guide")]["resource"]["title"] == evil


def test_request_bytes_follow_the_protocol(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    log = tmp_path / "requests.log"
    body = (
        "import json, sys\n"
        "line = sys.stdin.buffer.read()\n"
        f"open({str(log)!r}, 'ab').write(line)\n"
        "request = json.loads(line)\n"
        "print(json.dumps({'protocol': 'xstash.memory.v1', 'ok': True, 'id': request['id'], 'revision': request['revision']}))\n"
    )
    xb("put", json_file(sample()))
    assert (
        xb("sync", "--all", "--provider-config", adapter_config(tmp_path, body)).json["confirmed"]
        == 1
    )
    raw = log.read_bytes()
    assert raw.endswith(b"}\n") and raw.count(b"\n") == 1
    request = json.loads(raw)
    assert list(request) == ["protocol", "namespace", "operation", "id", "revision", "resource"]
    assert request["protocol"] == "xstash.memory.v1" and request["operation"] == "upsert"
    assert request["revision"] == "5069de4b5bad2811e72ce4195b2eceefcf15b35de063cfe59f47400219527712"
    assert schema_errors("memory-request", request) == []


def test_mock_adapter_speaks_the_protocol(tmp_path: Path) -> None:
    data = tmp_path / "remote.json"
    resource = normalize_resource(sample()).resource
    requests = [
        {
            "protocol": "xstash.memory.v1",
            "namespace": "n",
            "operation": "upsert",
            "id": resource["id"],
            "revision": "a" * 64,
            "resource": resource,
        },
        {
            "protocol": "xstash.memory.v1",
            "namespace": "n",
            "operation": "search",
            "query": "keyboard",
            "limit": 5,
        },
        {
            "protocol": "xstash.memory.v1",
            "namespace": "n",
            "operation": "delete",
            "id": resource["id"],
            "revision": "b" * 64,
        },
    ]
    for request in requests:
        assert schema_errors("memory-request", request) == []
        proc = subprocess.run(
            [sys.executable, str(ADAPTER), "--data", str(data)],
            input=json.dumps(request) + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        reply = json.loads(proc.stdout)
        assert schema_errors("memory-response", reply) == [], reply
        assert reply["ok"] is True


@pytest.mark.slow
def test_sigkill_during_long_sync_then_retry(tmp_path: Path) -> None:
    store = tmp_path / "store"
    data = tmp_path / "remote.json"
    calls = tmp_path / "calls.log"
    script = tmp_path / "counting.py"
    script.write_text(  # logs the call, then runs the adapter in this same process
        "import io, runpy, sys\n"
        "line = sys.stdin.readline()\n"
        f"open({str(calls)!r}, 'a').write(line[:200].split('\"id\":\"')[1][:73] + '\\n')\n"
        "sys.stdin = io.StringIO(line)\n"
        f"sys.argv = [{str(ADAPTER)!r}, '--data', {str(data)!r}]\n"
        f"runpy.run_path({str(ADAPTER)!r}, run_name='__main__')\n"
    )
    cfg = command_config(tmp_path, [sys.executable, str(script)], "n")
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([make(f"k{i}") for i in range(250)]))
    env = {**os.environ}
    base = [sys.executable, "-m", "xbrain"]
    subprocess.run(
        [*base, "put", str(batch), "--store", str(store)], check=True, capture_output=True, env=env
    )
    proc = subprocess.Popen(
        [*base, "sync", "--all", "--provider-config", str(cfg), "--store", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 120
    while (
        not calls.exists() or calls.read_text().count("\n") < 140
    ) and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before_retry = calls.read_text().count("\n")
    retry = subprocess.run(
        [*base, "sync", "--all", "--provider-config", str(cfg), "--store", str(store)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert retry.returncode == 0, retry.stderr
    result = json.loads(retry.stdout)
    assert result["confirmed"] + result["unchanged"] == 250
    assert result["unchanged"] >= 100  # at least one checkpoint of receipts survived the kill
    stored = json.loads(data.read_text())["n"]
    assert len(stored) == 250  # every resource exactly once in the target
    sent = calls.read_text().splitlines()
    replayed = len(sent) - 250
    assert 0 <= replayed <= 100 + 1  # at most one checkpoint's worth (plus the call in flight)
    assert before_retry >= 140
    final = json.loads(
        subprocess.run(
            [*base, "status", "--provider-config", str(cfg), "--store", str(store)],
            capture_output=True,
            text=True,
            env=env,
        ).stdout
    )
    assert final["pending"] == 0
