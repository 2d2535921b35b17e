"""The original's test vectors, pinned byte for byte."""

from __future__ import annotations

import pytest

from tests.conftest import sample
from xbrain.codec import canonical_json, digest
from xbrain.kinds.model import normalize_resource, resource_id, revision


@pytest.mark.parametrize(
    ("provider", "source_id", "expected"),
    [
        (
            "web",
            "fictional-dialog-guide",
            "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56",
        ),
        (
            "web",
            "fictional-accessibility-guide",
            "resource_86fa98108f4ccaaaa79518d7488c849aca9ecb938de1d9862b0360f1fd42f655",
        ),
        (
            "x",
            "123456789",
            "resource_b9fd64f7614d707b8c04d4f72a7e57d656097ea1aac5bd09e377372def162b89",
        ),
    ],
)
def test_resource_ids(provider: str, source_id: str, expected: str) -> None:
    assert resource_id(provider, source_id) == expected


def test_synthetic_resource_revision() -> None:
    resource = normalize_resource(sample()).resource
    assert canonical_json(resource) == (
        '{"id":"resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56",'
        '"source":{"provider":"web","id":"fictional-dialog-guide","url":"https://example.com/dialog-guide"},'
        '"title":"Fictional accessible dialog guide",'
        '"text":"A fictional reference about keyboard focus and dialog accessibility.",'
        '"summary":"A sample checklist, not a real product recommendation.",'
        '"purpose":"Review keyboard behavior in React dialogs",'
        '"useWhen":["React dialog accessibility review"],'
        '"limitations":["Fictional test resource; not independently verified"],'
        '"savedReason":null,"updatedAt":"2026-10-07T00:00:00.000Z"}'
    )
    assert revision(resource) == "5069de4b5bad2811e72ce4195b2eceefcf15b35de063cfe59f47400219527712"


def test_tombstone_digest() -> None:
    tombstone = {
        "id": "resource_e6030e7a46ceae274d1f608ea3873d83ecbb532113359bbcce333adfce358a56",
        "deletedAt": "2026-10-07T00:00:00.001Z",
    }
    assert digest(tombstone) == "b3a3e64cd14f049957140b23a957575511c0e25f995d0514b8acfcf3ccd427c0"


def test_digest_of_null() -> None:
    assert digest(None) == "74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"


def test_provider_key_vectors() -> None:
    file_key = digest({"kind": "file", "path": "/tmp/target.json", "scope": "personal"})
    assert file_key == "3776e3dc20be87ff83ea82294e08f47112347963835ca704a5f857030a30278a"
    command_key = digest(
        {
            "kind": "command",
            "command": ["/usr/bin/node", "/opt/adapter.mjs"],
            "namespace": "fixture",
            "scope": "personal",
        }
    )
    assert command_key == "27f5f54dafb6cd26ee214d31dfae46bbe94f778f1f59dbdf1de6b58ee8463821"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("a\nb\tc\x01\x1f", '"a\\nb\\tc\\u0001\\u001f"'),
        ("\u2028\u2029\x7f", '"\u2028\u2029\x7f"'),
        ("\ud800x", '"\\ud800x"'),
        ("中文 😀", '"中文 😀"'),
        ({"b": 1, "a": [True, None, 1.5]}, '{"b":1,"a":[true,null,1.5]}'),
        ('quote " and \\', '"quote \\" and \\\\"'),
    ],
)
def test_canonical_json_matches_javascript(value: object, expected: str) -> None:
    assert canonical_json(value) == expected
