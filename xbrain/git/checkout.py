"""What git itself puts in a store's working tree: which commit ``HEAD`` names, and how
git's own checkouts write files there."""

from __future__ import annotations

from dulwich.refs import Ref

from .objects import MAIN, PLAIN_LINE_ENDINGS, config_change
from .repo import Repository

__all__ = ["Checkout"]


class Checkout(Repository):
    """The store as a plain git checkout: ``HEAD`` and ``core.autocrlf``."""

    def checked_out(self) -> str | None:
        """What the working tree's ``HEAD`` names when it is not ``main`` (a plain ``git
        checkout``): ``branch NAME`` or ``commit SHA``; None when it is ``main``."""
        try:
            chain, sha = self._repo.refs.follow(Ref(b"HEAD"))
        except (KeyError, ValueError, OSError):
            return "an unreadable HEAD"
        if chain[-1] == MAIN:
            return None
        if len(chain) > 1:
            name = chain[-1].decode("utf-8", "replace")
            return f"branch {name.removeprefix('refs/heads/')}"
        return f"commit {sha.decode()[:12]}" if sha else "an unreadable HEAD"

    def line_endings_kept(self) -> bool:
        """Whether git's own checkouts here keep files byte for byte (``core.autocrlf``
        false in ``.git/config``, over any global setting): a CRLF copy of a record is a
        file xbrain did not write, so every write to it would be refused as a hand edit."""
        try:
            value = self._repo.get_config().get((b"core",), b"autocrlf")
        except KeyError:
            return False
        return value.strip().lower() == b"false"

    def keep_line_endings(self) -> None:
        """Set ``core.autocrlf`` false in this repository's ``.git/config``."""
        with config_change():
            config = self._repo.get_config()
            config.set(*PLAIN_LINE_ENDINGS)
            config.write_to_path()
