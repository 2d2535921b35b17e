"""A running ``xbrain ui`` for the viewer's tests: a seeded store, the real command in a
subprocess, and raw HTTP requests whose every header the test chooses."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

HOSTILE = (
    "Hostile <script>window.__pwned = 1</script> text and "
    '<img src=x onerror="window.__pwned = 2"> and [a link](javascript:window.__pwned=3) '
    'and <a href="#" onclick="window.__pwned=4">click</a>.'
)
ZH_SKILL_V1 = (
    "---\nname: deploy-check\ndescription: 部署前检查清单 before deploying a service\n---\n"
    "# Deploy check\n\n1. Run the tests.\n2. 检查数据库迁移是否可以回滚。\n"
)
ZH_SKILL_V2 = ZH_SKILL_V1.replace("检查数据库迁移是否可以回滚", "确认数据库迁移能够回滚")


def seed(store_dir: Path) -> dict[str, str]:
    """A store with two resources (English, Chinese), three entries (one holding a hostile
    payload), and a skill with two revisions (the first published): the ids."""
    from xbrain.store import Store

    store = Store(store_dir)
    store.init()
    put = store.put(
        [
            _resource("dialogs", "Accessible dialog guide", "Keyboard focus in modal dialogs."),
            _resource("zh-deploy", "部署手册", "生产环境部署步骤和数据库迁移回滚。"),
        ]
    )
    resources = [item["id"] for item in put["results"]]
    entries = store.entry_put(
        [
            {
                "kind": "rule",
                "name": "no-force-push",
                "description": "Never force-push to a shared branch",
                "body": "Do **not** run `git push --force` on main.",
                "queries": ["force push to main", "git push force"],
            },
            {
                "kind": "memory",
                "name": "部署窗口",
                "description": "生产环境部署窗口",
                "body": "生产环境在上海机房，部署窗口：周二晚上。",
                "keywords": ["部署窗口"],
            },
            {
                "kind": "memory",
                "name": "hostile-note",
                "description": "A note about a pwned payload",
                "body": HOSTILE,
                "keywords": ["pwned"],
            },
        ]
    )
    ids = {item["name"]: item["id"] for item in entries["results"]}
    rollback = "# Rollback\n\n回滚迁移：`migrate down 1`。\n".encode()
    first = store.skill_save_files(
        {"SKILL.md": ZH_SKILL_V1.encode(), "references/rollback.md": rollback}, publish=True
    )
    second = store.skill_save_files(
        {"SKILL.md": ZH_SKILL_V2.encode(), "references/rollback.md": rollback}
    )
    return {
        "resource": resources[0],
        "resource_zh": resources[1],
        "rule": ids["no-force-push"],
        "memory_zh": ids["部署窗口"],
        "hostile": ids["hostile-note"],
        "rev1": first["revision_id"],
        "rev2": second["revision_id"],
    }


def _resource(sid: str, title: str, text: str) -> dict[str, Any]:
    return {
        "source": {"provider": "web", "id": sid, "url": f"https://example.com/{sid}"},
        "title": title,
        "text": text,
        "summary": text,
        "purpose": title,
        "useWhen": [title],
        "limitations": [],
        "savedReason": None,
        "updatedAt": "2026-10-07T00:00:00.000Z",
    }


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str


@dataclass
class Running:
    """``xbrain ui`` as a subprocess: its printed URL, port and token."""

    proc: subprocess.Popen[str]
    url: str
    port: int
    token: str
    cookies: dict[str, str] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
    ) -> Answer:
        """One request on 127.0.0.1 with exactly these headers (Host: this server's own
        unless ``host``), keeping the cookies the server sets."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", host if host is not None else f"127.0.0.1:{self.port}")
            if self.cookies:
                conn.putheader("Cookie", "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
            for name, value in (headers or {}).items():
                conn.putheader(name, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            text = response.read().decode("utf-8")
            for name, value in response.getheaders():
                if name.lower() == "set-cookie":
                    key, _, rest = value.partition("=")
                    self.cookies[key] = rest.split(";", 1)[0]
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, text)
        finally:
            conn.close()

    def get(self, path: str, **options: Any) -> Answer:
        """GET ``path`` under this run's token."""
        return self.request("GET", f"/{self.token}{path}", **options)

    def csrf(self, path: str = "/") -> str:
        """The CSRF token a page of this browser session carries."""
        page = self.get(path)
        found = re.search(r'name="csrf" (?:value|content)="([0-9a-f]+)"', page.body)
        assert found is not None, page.body[:500]
        return found.group(1)

    def post(self, fields: dict[str, str], **options: Any) -> Answer:
        """POST a form to the action endpoint."""
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            **options.pop("headers", {}),
        }
        body = urlencode(fields).encode()
        return self.request("POST", f"/{self.token}/act", headers=headers, body=body, **options)

    def stop(self) -> tuple[int, str, str]:
        """Ctrl-C, then its exit code and the rest of its output."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


def start(store_dir: Path, *args: str) -> Running:
    """``python -m xbrain ui --store STORE ARGS`` once it has printed its URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "xbrain", "ui", "--store", str(store_dir), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
        # Ctrl-C as at a terminal: a shell's background job (a suite started with `&`)
        # hands down an ignored SIGINT, which the viewer leaves ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    found = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/([A-Za-z0-9_-]{20,})/", line)
    if found is None:
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"xbrain ui printed {line!r}; stderr: {err}")
    return Running(proc, line, int(found.group(1)), found.group(2))
