"""capture, pull, pending and distill through the CLI (reference §5, §10; SPEC §7)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, ROOT, Result, head, snapshot_files
from xbrain.kinds.model import resource_id

Run = Callable[..., Result]
MOCK_SOURCE = ROOT / "examples" / "mock_source.py"
FIRST = resource_id("x", "1800000000000000001")
REVIEW = "Source text changed; review previous distillation before use."


def library(tmp_path: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    path = tmp_path / "bookmarks.json"
    if rows is None:
        path.write_bytes((EXAMPLES / "bookmarks.json").read_bytes())
    else:
        path.write_text(json.dumps({"version": 1, "bookmarks": rows}))
    return path


# -- capture -------------------------------------------------------------------------------


def test_capture_twice_is_unchanged_and_gallery_bytes_stay(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    path = library(tmp_path)
    before = path.read_bytes()
    first = xb("capture", "--bookmarks", str(path))
    assert first.code == 0, first.stderr
    assert (first.json["added"], first.json["skippedDeleted"]) == (3, 0)
    commit = head(store_dir)
    again = xb("capture", "--bookmarks", str(path))
    assert (again.json["unchanged"], again.json["commit"]) == (3, None)
    assert head(store_dir) == commit
    assert path.read_bytes() == before
    resource = xb("get", FIRST).json
    assert resource["source"] == {
        "provider": "x",
        "id": "1800000000000000001",
        "url": "https://x.com/i/web/status/1800000000000000001",
    }
    assert resource["title"].startswith("A fictional thread") and resource["savedReason"] is None
    assert resource["design"]["status"] == "unanalyzed"
    assert resource["design"]["images"] == [
        {"url": "https://pbs.example.com/fictional-cards.png", "observed": False}
    ]
    second = xb("get", resource_id("x", "1800000000000000002")).json
    assert second["text"].startswith("一条虚构的推文")  # extended_tweet.full_text wins


def test_user_edit_survives_recapture_and_text_change_is_flagged(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path
) -> None:
    path = library(tmp_path)
    xb("capture", "--bookmarks", str(path))
    edited = xb("get", FIRST).json
    edited.update(
        title="My own title",
        purpose="Card spacing reference",
        useWhen=["designing cards"],
        updatedAt="2027-01-01T00:00:00Z",
    )
    assert xb("put", json_file(edited)).code == 0
    assert xb("capture", "--bookmarks", str(path)).json["unchanged"] == 3  # nothing new upstream
    rows = json.loads(path.read_text())["bookmarks"]
    rows[0]["full_text"] = "A fictional thread, now revised upstream."
    changed = library(tmp_path, rows)
    result = xb("capture", "--bookmarks", str(changed))
    assert result.json["updated"] == 1
    resource = xb("get", FIRST).json
    assert resource["title"] == "My own title" and resource["purpose"] == "Card spacing reference"
    assert resource["summary"] == "Invented notes on card spacing."
    assert resource["text"] == "A fictional thread, now revised upstream."
    assert resource["limitations"][-1] == REVIEW
    assert resource["updatedAt"] > "2027-01-01T00:00:00.000Z"


def test_deleted_bookmark_is_not_resurrected(xb: Run, tmp_path: Path) -> None:
    path = library(tmp_path)
    xb("capture", "--bookmarks", str(path))
    xb("delete", FIRST)
    result = xb("capture", "--bookmarks", str(path))
    assert result.json["skippedDeleted"] == 1
    assert xb("get", FIRST).code == 3


def test_invalid_row_fails_whole_capture_or_is_skipped(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    rows = json.loads((EXAMPLES / "bookmarks.json").read_text())["bookmarks"]
    rows.append({"id": "not-numeric", "text": "no usable url", "url": "javascript:alert(1)"})
    path = library(tmp_path, rows)
    failed = xb("capture", "--bookmarks", str(path))
    assert (failed.code, failed.stderr) == (4, "Bookmark not-numeric: Invalid URL\n")
    assert not store_dir.exists()
    skipped = xb("capture", "--bookmarks", str(path), "--skip-invalid")
    assert skipped.code == 1
    assert skipped.json["added"] == 3
    assert skipped.json["invalid"] == [{"bookmarkId": "not-numeric", "error": "Invalid URL"}]


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (None, 3, None),
        ("{", 4, "Invalid bookmark library JSON."),
        ('{"version": 2, "bookmarks": []}', 4, "Invalid store; existing data was not overwritten."),
        (
            '{"version": 1, "bookmarks": [{"id": "a"}, {"id": "a"}]}',
            4,
            "Invalid bookmark or duplicate ID in store; existing data was not overwritten.",
        ),
    ],
)
def test_bad_libraries(
    xb: Run, tmp_path: Path, content: str | None, code: int, message: str | None
) -> None:
    path = tmp_path / "lib.json"
    if content is not None:
        path.write_text(content)
    result = xb("capture", "--bookmarks", str(path))
    assert result.code == code
    if message:
        assert result.stderr == message + "\n"


def test_new_images_mark_analysis_stale(xb: Run, tmp_path: Path) -> None:
    path = library(tmp_path)
    xb("capture", "--bookmarks", str(path))
    inspected = xb("inspect", FIRST).json
    image = "https://pbs.example.com/fictional-cards.png"
    analysis = {
        "id": FIRST,
        "resourceRevision": inspected["resourceRevision"],
        "design": {
            "status": "analyzed",
            "images": [{"url": image, "observed": True}],
            "domains": [{"label": "web-ui", "featureIds": ["pad"]}],
            "features": [
                {
                    "id": "pad",
                    "kind": "spacing",
                    "value": "generous padding",
                    "imageUrl": image,
                    "evidence": "wide margins",
                }
            ],
            "styles": [],
            "analyzedAt": "2026-11-01T00:00:00Z",
            "reason": "Looked at it.",
        },
    }
    assert xb("analyze", "-", input=analysis).code == 0
    rows = json.loads(path.read_text())["bookmarks"]
    rows[0]["media"].append({"url": "https://pbs.example.com/second.png", "type": "image"})
    xb("capture", "--bookmarks", str(library(tmp_path, rows)))
    design = xb("get", FIRST).json["design"]
    assert design["status"] == "stale"
    assert design["reason"] == "Source images changed; inspect the current originals before use."
    assert [i["url"] for i in design["images"]] == [image, "https://pbs.example.com/second.png"]


# -- pull ----------------------------------------------------------------------------------


def source_config(
    tmp_path: Path, items: list[dict[str, Any]], page_size: int = 2, **overrides: Any
) -> str:
    items_file = tmp_path / "items.json"
    items_file.write_text(json.dumps(items))
    command = overrides.pop(
        "command",
        [
            sys.executable,
            str(MOCK_SOURCE),
            "--items",
            str(items_file),
            "--page-size",
            str(page_size),
        ],
    )
    value = {
        "kind": "command",
        "scope": "personal",
        "provider": "notes",
        "account": "me",
        "pagination": "cursor",
        "incremental": "checkpoint",
        "timeoutMs": 5000,
        "command": command,
        **overrides,
    }
    path = tmp_path / "source.json"
    path.write_text(json.dumps(value))
    return str(path)


def items(count: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "id": f"item-{i}",
            "url": f"https://example.com/{i}",
            "title": f"Item {i}",
            "text": f"Body of item {i}.",
            "updatedAt": "2026-10-01T00:00:00Z",
        }
        for i in range(start, start + count)
    ]


def test_two_page_pull_resumes_after_an_adapter_error(xb: Run, tmp_path: Path) -> None:
    wrapper = tmp_path / "flaky_source.py"
    flag = tmp_path / "fail-second-page"
    flag.write_text("yes")
    items_file = tmp_path / "items.json"
    items_file.write_text(json.dumps(items(4)))
    wrapper.write_text(
        "import json, os, subprocess, sys\n"
        "line = sys.stdin.readline()\n"
        f"if json.loads(line)['cursor'] and os.path.exists({str(flag)!r}):\n"
        "    sys.exit(4)\n"
        f"result = subprocess.run([sys.executable, {str(MOCK_SOURCE)!r}, '--items', {str(items_file)!r}, '--page-size', '2'], input=line, capture_output=True, text=True)\n"
        "sys.stdout.write(result.stdout)\n"
    )
    cfg = source_config(tmp_path, items(4), command=[sys.executable, str(wrapper)])
    failed = xb("pull", "--source-config", cfg)
    assert failed.code == 1
    data = failed.json
    assert (data["state"], data["pages"], data["added"]) == ("failed", 1, 2)
    assert data["error"] == "Source adapter failed; inspect its private diagnostics."
    assert (
        data["note"]
        == "Committed pages are preserved; retry the same command. No missing item was deleted."
    )
    assert xb("status").json["resumableSources"] == 1
    flag.unlink()
    resumed = xb("pull", "--source-config", cfg)
    assert (resumed.json["state"], resumed.json["pages"], resumed.json["added"]) == (
        "complete",
        1,
        2,
    )
    status = xb("status").json
    assert (status["resources"], status["pendingDistillation"], status["resumableSources"]) == (
        4,
        4,
        0,
    )


def test_max_pages_pauses_then_resumes_and_checkpoint_limits_next_run(
    xb: Run, tmp_path: Path
) -> None:
    cfg = source_config(tmp_path, items(5))
    paused = xb("pull", "--source-config", cfg, "--max-pages", "1")
    assert (paused.code, paused.json["state"], paused.json["note"]) == (
        0,
        "paused",
        "Page budget reached. Repeat the same command to resume.",
    )
    done = xb("pull", "--source-config", cfg)
    assert (done.json["state"], done.json["pages"], done.json["added"]) == ("complete", 2, 3)
    again = xb("pull", "--source-config", cfg)  # the checkpoint: nothing new
    assert (again.json["state"], again.json["received"]) == ("complete", 0)
    assert (
        xb("pull", "--source-config", cfg, "--max-pages", "0").stderr
        == "max-pages must be 1–100.\n"
    )


def test_restart_drops_the_cursor_keeps_the_data(xb: Run, tmp_path: Path) -> None:
    cfg = source_config(tmp_path, items(6))
    xb("pull", "--source-config", cfg, "--max-pages", "2")
    restarted = xb("pull", "--source-config", cfg, "--restart", "--max-pages", "1")
    assert restarted.json["state"] == "paused"
    assert restarted.json["unchanged"] == 2 and restarted.json["added"] == 0  # page 1 again
    assert xb("status").json["resources"] == 4


def test_bad_item_fails_the_page_atomically(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    bad = items(3)
    bad[1]["url"] = "javascript:alert(1)"
    cfg = source_config(tmp_path, bad, page_size=3)
    result = xb("pull", "--source-config", cfg)
    assert (result.json["state"], result.json["pages"]) == ("failed", 0)
    assert result.json["error"] == "Source URLs must use HTTPS without embedded credentials."
    assert xb("status").json["resources"] == 0


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ({"nextCursor": "offset:0"}, "Repeated pagination cursor; page not committed."),
        ({"account": "someone-else"}, "Source/account mismatch; page not committed."),
        (
            {"ok": False, "code": "access_denied"},
            "Source fetch blocked: access_denied. No fallback source/account was selected.",
        ),
        (
            {"ok": False, "code": "weird"},
            "Source fetch blocked: failed. No fallback source/account was selected.",
        ),
        ({"protocol": "other"}, "Invalid source adapter protocol."),
        ({"coverage": "most"}, "Invalid source page."),
        (
            {"checkpoint": None, "nextCursor": None},
            "Incremental source must confirm a checkpoint on its final page.",
        ),
    ],
)
def test_page_rules(xb: Run, tmp_path: Path, reply: dict[str, Any], error: str) -> None:
    script = tmp_path / "fixed.py"
    base = {
        "protocol": "xstash.source.v1",
        "ok": True,
        "provider": "notes",
        "account": "me",
        "items": items(1),
        "nextCursor": None,
        "checkpoint": "done",
        "coverage": "full",
    }
    script.write_text(
        f"import sys\nsys.stdin.readline()\nprint({json.dumps(json.dumps({**base, **reply}))})\n"
    )
    if reply.get("nextCursor") == "offset:0":
        # first page hands out cursor "offset:0" again on the second call
        script.write_text(
            "import json, sys\nrequest = json.loads(sys.stdin.readline())\n"
            f"base = {base!r}\n"
            "base['nextCursor'] = 'offset:0'; base['checkpoint'] = None\n"
            "print(json.dumps(base))\n"
        )
    cfg = source_config(tmp_path, [], command=[sys.executable, str(script)])
    result = xb("pull", "--source-config", cfg)
    assert result.json["state"] == "failed"
    assert result.json["error"] == error


def test_concurrent_pull_cannot_commit_the_same_progress(
    xb: Run, tmp_path: Path, store_dir: Path
) -> None:
    """The adapter itself runs a second pull while the first is fetching."""
    inner_cfg = source_config(tmp_path, items(2))
    wrapper = tmp_path / "nested.py"
    wrapper.write_text(
        "import os, subprocess, sys\n"
        "line = sys.stdin.readline()\n"
        "if not os.environ.get('XBRAIN_TEST_NESTED'):\n"
        f"    subprocess.run([sys.executable, '-m', 'xbrain', 'pull', '--source-config', {str(tmp_path / 'outer.json')!r}, '--store', {str(store_dir)!r}], env={{**os.environ, 'XBRAIN_TEST_NESTED': '1'}}, capture_output=True)\n"
        f"result = subprocess.run([sys.executable, {str(MOCK_SOURCE)!r}, '--items', {str(tmp_path / 'items.json')!r}, '--page-size', '2'], input=line, capture_output=True, text=True)\n"
        "sys.stdout.write(result.stdout)\n"
    )
    outer = json.loads(Path(inner_cfg).read_text())
    outer["command"] = [sys.executable, str(wrapper)]
    (tmp_path / "outer.json").write_text(json.dumps(outer))
    xb("init")
    result = xb("pull", "--source-config", str(tmp_path / "outer.json"))
    assert result.json["state"] == "failed"
    assert (
        result.json["error"]
        == "Another pull advanced this source; retry from its committed progress."
    )
    assert xb("status").json["resources"] == 2  # the inner pull's page, committed once


def test_source_config_rules(xb: Run, tmp_path: Path) -> None:
    good = json.loads(Path(source_config(tmp_path, [])).read_text())
    cases = [
        (
            {**good, "scope": "shared"},
            "Select a personal source, account and real pagination/incremental capabilities explicitly.",
        ),
        (
            {**good, "pagination": "infinite"},
            "Select a personal source, account and real pagination/incremental capabilities explicitly.",
        ),
        ({**good, "timeoutMs": 61_000}, "Source timeoutMs must be 1,000–60,000."),
        (
            {**good, "command": ["python3"]},
            "Adapter command must name an absolute trusted executable.",
        ),
    ]
    for value, message in cases:
        path = tmp_path / "cfg.json"
        path.write_text(json.dumps(value))
        assert xb("pull", "--source-config", str(path)).stderr == message + "\n"
    big = tmp_path / "big.json"
    big.write_text(json.dumps({**good, "pad": "x" * 16_000}))
    assert xb("pull", "--source-config", str(big)).stderr == "Source config exceeds 16 KiB.\n"
    assert xb("pull").code == 2


# -- pending / distill ---------------------------------------------------------------------


def distillation(entry: dict[str, Any], **changes: Any) -> dict[str, Any]:
    value = {
        "id": entry["id"],
        "sourceRevision": entry["sourceRevision"],
        "resourceRevision": entry["resourceRevision"],
        "summary": "Short distilled summary.",
        "purpose": "Find keyboard trap fixes",
        "useWhen": ["auditing modals"],
        "limitations": ["Fictional"],
        "savedReason": "invented by the agent",
    }
    value.update(changes)
    return value


def test_pending_then_distill(xb: Run, tmp_path: Path, store_dir: Path) -> None:
    xb("pull", "--source-config", source_config(tmp_path, items(3)))
    queue = xb("pending", "--limit", "2").json
    assert queue["pending"] == 3 and len(queue["items"]) == 2
    first = queue["items"][0]
    result = xb("distill", "-", input=[distillation(first)])
    assert result.json["distilled"] == 1 and result.json["pending"] == 2
    resource = xb("get", first["id"]).json
    assert resource["purpose"] == "Find keyboard trap fixes"
    assert resource["savedReason"] is None  # never settable by distill
    assert resource["limitations"] == ["Fictional"]
    assert xb("status").json["pendingDistillation"] == 2


def test_distill_rejected_when_resource_changed(
    xb: Run, json_file: Callable[[Any], str], tmp_path: Path, store_dir: Path
) -> None:
    xb("pull", "--source-config", source_config(tmp_path, items(2)))
    entries = xb("pending").json["items"]
    changed = dict(entries[0]["resource"])
    changed.update(title="Edited meanwhile", updatedAt="2099-01-01T00:00:00Z")
    xb("put", json_file(changed))
    before = snapshot_files(store_dir)
    result = xb("distill", "-", input=[distillation(entries[1]), distillation(entries[0])])
    assert (result.code, result.stderr) == (
        5,
        "Stale distillation; re-read pending resources before updating.\n",
    )
    assert snapshot_files(store_dir) == before
    for bad, message in (
        ([], "Distill 1–100 resources at a time."),
        ([{"id": 1}], "Invalid or duplicate distillation item."),
    ):
        assert xb("distill", "-", input=bad).stderr == message + "\n"
    missing = distillation(entries[1])
    del missing["purpose"]
    assert xb("distill", "-", input=missing).stderr.startswith("Invalid purpose")


def test_pulled_changes_are_queued_and_block_sync(xb: Run, tmp_path: Path) -> None:
    xb("pull", "--source-config", source_config(tmp_path, items(1)))
    provider = tmp_path / "provider.json"
    provider.write_text(
        json.dumps({"kind": "file", "scope": "personal", "path": str(tmp_path / "remote.json")})
    )
    result = xb("sync", "--all", "--provider-config", str(provider))
    assert (result.code, result.json["remoteSync"], result.json["skippedPending"]) == (
        1,
        "blocked_pending_distillation",
        1,
    )
    rid = resource_id("notes", "item-0")
    assert xb("get", rid).json["limitations"] == [
        "Source fetched or changed; Agent distillation is pending."
    ]


def test_tombstoned_item_is_never_resurrected_by_pull(xb: Run, tmp_path: Path) -> None:
    xb("pull", "--source-config", source_config(tmp_path, items(2)))
    xb("delete", resource_id("notes", "item-0"))
    # another account of the same provider: no checkpoint, so the items come again
    again = source_config(tmp_path, items(2), account="me-again")
    result = xb("pull", "--source-config", again)
    assert (result.json["state"], result.json["received"], result.json["skippedDeleted"]) == (
        "complete",
        2,
        1,
    )
    assert xb("get", resource_id("notes", "item-0")).code == 3


def test_progress_bar_only_on_a_terminal(tmp_path: Path, store_dir: Path) -> None:
    import pty
    import subprocess

    path = library(tmp_path)
    capture = [sys.executable, "-m", "xbrain", "capture", "--bookmarks", str(path)]
    capture += ["--store", str(store_dir)]
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        capture,
        stdout=subprocess.PIPE,
        stderr=follower,
    )
    out, _ = proc.communicate(timeout=60)
    os.close(follower)
    shown = b""
    try:
        while chunk := os.read(leader, 4096):
            shown += chunk
    except OSError:
        pass
    os.close(leader)
    assert proc.returncode == 0
    assert json.loads(out)["added"] == 3  # stdout stays one JSON document
    assert b"capture" in shown  # the bar went to the terminal on stderr
    plain = subprocess.run(capture, capture_output=True)
    assert plain.stderr == b""  # not a terminal: no bar
