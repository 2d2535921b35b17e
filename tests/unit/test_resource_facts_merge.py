"""Two devices' copies of a resource's sidecar merge the same whichever side pulls:
the later copy, with both sides' supersede links, accepted when either side accepted."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from xbrain.codec import dump_yaml, load_yaml
from xbrain.kinds.resourcefacts import merge

IDS = ["resource_" + f"{n:064x}" for n in range(4)]


def facts(**fields: object) -> bytes:
    return dump_yaml({**fields, "updatedAt": fields.pop("updatedAt", "2026-01-01T00:00:00.000Z")})


def test_both_links_are_kept_and_an_acceptance_is_final() -> None:
    accepted = facts(supersedes=[IDS[0]], updatedAt="2026-01-02T00:00:00.000Z")
    superseded_later = facts(
        supersedes=[IDS[0], IDS[1]], status="proposed", updatedAt="2026-01-03T00:00:00.000Z"
    )
    for a, b in ((accepted, superseded_later), (superseded_later, accepted)):
        merged = load_yaml(merge(a, b))
        assert merged["supersedes"] == [IDS[0], IDS[1]]
        assert "status" not in merged  # the later edit of the proposal kept the acceptance
        assert merged["updatedAt"] == "2026-01-03T00:00:00.000Z"


SIDECARS = st.builds(
    lambda links, status, day: facts(
        **({"supersedes": links} if links else {}),
        **({"status": status} if status else {}),
        updatedAt=f"2026-01-0{day}T00:00:00.000Z",
    ),
    st.lists(st.sampled_from(IDS), unique=True, max_size=3),
    st.sampled_from([None, "proposed", "rejected"]),
    st.integers(1, 3),
)


@settings(max_examples=200, deadline=None)
@given(SIDECARS, SIDECARS)
def test_the_merge_is_commutative(a: bytes, b: bytes) -> None:
    assert merge(a, b) == merge(b, a)
