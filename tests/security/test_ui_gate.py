"""``xbrain ui`` is a page nobody else can open or drive: no answer without this run's
token, to another Host (DNS rebinding) or to another site (Origin, Sec-Fetch-Site); no
write without the page's CSRF token; nothing listening but 127.0.0.1; and a memory's
stored HTML is text, never markup that runs."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import head
from tests.ui.server import Running, seed, start

pytest.importorskip("starlette", reason="the viewer's extra (xbrain[ui]) is not installed")


@pytest.fixture
def ids(store_dir: Path) -> dict[str, str]:
    return seed(store_dir)


@pytest.fixture
def ui(store_dir: Path, ids: dict[str, str]) -> Iterator[Running]:
    running = start(store_dir, "--idle", "300")
    yield running
    running.stop()


def test_a_request_without_the_token_is_refused(ui: Running) -> None:
    for path in ("/", "/search?q=x", "/static/ui.css", f"/{ui.token[:-1]}/", f"/{ui.token}x/"):
        answer = ui.request("GET", path)
        assert answer.status == 403 and "token" in answer.body, path
        assert "<html" not in answer.body
    assert ui.request("GET", f"/x/{ui.token}/").status == 403
    assert ui.get("/").status == 200


def test_a_foreign_host_is_refused(ui: Running) -> None:
    """A DNS-rebinding page reaches 127.0.0.1 under its own name: its Host says so."""
    for host in (
        f"evil.example:{ui.port}",
        "evil.example",
        f"127.0.0.1:{ui.port + 1}",
        "127.0.0.1",
        f"127.0.0.1.evil.example:{ui.port}",
        "",
    ):
        answer = ui.get("/", host=host)
        assert answer.status == 403 and "Host" in answer.body, host
    assert ui.get("/", host=f"localhost:{ui.port}").status == 200


def test_a_foreign_origin_is_refused(ui: Running, store_dir: Path, ids: dict[str, str]) -> None:
    for origin in ("http://evil.example", "null", f"http://127.0.0.1:{ui.port + 1}"):
        answer = ui.get("/", headers={"Origin": origin})
        assert answer.status == 403 and "Origin" in answer.body, origin
    before = head(store_dir)
    token = ui.csrf()
    fields = {"csrf": token, "action": "entry-retire", "id": ids["rule"]}
    answer = ui.post(fields, headers={"Origin": "http://evil.example"})
    assert answer.status == 403 and head(store_dir) == before
    cross = ui.post(fields, headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status == 403 and head(store_dir) == before
    sibling = ui.get("/", headers={"Sec-Fetch-Site": "same-site"})  # another local port
    assert sibling.status == 403
    same = ui.post(fields, headers={"Origin": f"http://127.0.0.1:{ui.port}"})
    assert same.status == 303 and head(store_dir) != before


def test_a_write_needs_the_session_csrf_token(
    ui: Running, store_dir: Path, ids: dict[str, str]
) -> None:
    before = head(store_dir)
    token = ui.csrf()
    base = {"action": "entry-retire", "id": ids["rule"]}
    for fields in (
        base,
        {**base, "csrf": ""},
        {**base, "csrf": "0" * 64},
        {**base, "csrf": token[:-1]},
    ):
        answer = ui.post(fields)
        assert answer.status == 403 and "CSRF" in answer.body
    cookies = dict(ui.cookies)
    ui.cookies.clear()  # another browser session: the token is not its own
    assert ui.post({**base, "csrf": token}).status == 403
    ui.cookies.update({name: "A" * 43 for name in cookies})
    assert ui.post({**base, "csrf": token}).status == 403
    assert head(store_dir) == before
    assert ui.request("GET", f"/{ui.token}/act").status == 405  # no write by GET


def test_the_cookie_is_the_session_s_own(ui: Running) -> None:
    answer = ui.get("/")
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert f"Path=/{ui.token}/" in cookie


def test_it_listens_on_loopback_only(ui: Running) -> None:
    """Every listening socket on the viewer's port is bound to 127.0.0.1 (never 0.0.0.0
    or an IPv6 address)."""
    bound = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, port = local.rsplit(":", 1)
            if int(port, 16) == ui.port and state == "0A":  # LISTEN
                bound.append((table, address))
    if not bound:
        pytest.skip("no /proc/net/tcp here to read the listening sockets from")
    assert bound == [("/proc/net/tcp", "0100007F")]  # 127.0.0.1, little-endian hex


def test_a_redirect_stays_inside_the_viewer(ui: Running, ids: dict[str, str]) -> None:
    token = ui.csrf()
    for back in ("//evil.example/", "https://evil.example/", "\\\\evil.example"):
        answer = ui.post(
            {"csrf": token, "action": "entry-activate", "id": ids["rule"], "back": back}
        )
        assert answer.status == 303
        assert answer.headers["location"].startswith(f"/{ui.token}/?msg=")


def test_stored_html_is_shown_as_text(ui: Running, ids: dict[str, str]) -> None:
    """A memory holding <script>, an onerror handler, a javascript: link and an onclick
    comes out escaped on every page that shows it, under a policy with no inline
    script."""
    pages = [
        ui.get(f"/entry/{ids['hostile']}").body,
        ui.get("/search?q=pwned").body,
        ui.get("/entries").body,
    ]
    assert "hostile-note" in pages[1]  # found: its text is on the page
    for body in pages:
        assert "<script>window" not in body and "<img" not in body
        assert not re.search(r"<[^>]+\son(error|click)\s*=", body)
        assert 'href="javascript:' not in body
    assert "&lt;script&gt;" in pages[0]
    policy = ui.get("/").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "default-src 'none'" in policy
    assert "unsafe-inline" not in policy


def test_a_form_is_bounded_before_it_is_read(
    ui: Running, store_dir: Path, ids: dict[str, str]
) -> None:
    before = head(store_dir)
    token = ui.csrf()
    fields = {"csrf": token, "action": "entry-retire", "id": ids["rule"]}
    huge = ui.post({**fields, "pad": "x" * 70_000})
    assert huge.status == 403 and "64 KiB" in huge.body
    long_field = ui.post({**fields, "pad": "x" * 5_000})
    assert long_field.status == 400 and "not a short text" in long_field.body
    undeclared = ui.request(  # no Content-Length: refused before anything is read
        "POST", f"/{ui.token}/act", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert undeclared.status == 403 and "declare its length" in undeclared.body
    assert head(store_dir) == before
