"""``xbrain ui``: a local web viewer of one store (the ``xbrain[ui]`` extra).

Starlette (a small ASGI toolkit) behind uvicorn (its server, h11 only), Jinja2 pages
rendered on the server, markdown-it-py and nh3 for stored Markdown, a little CSS and
JavaScript shipped here: nothing comes from the network. The server listens on
127.0.0.1 only; :mod:`.guard` refuses any request without this run's token, with a
foreign ``Host`` or from another site, and :mod:`.app` holds the per-session CSRF token
every write needs. Nothing here is imported unless ``xbrain ui`` runs.
"""

from __future__ import annotations

import secrets
import signal
import socket
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import UsageError, XbrainError

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["serve"]

_NEEDS = ("starlette", "uvicorn", "jinja2", "markdown_it", "nh3")


def serve(
    store: Store,
    *,
    port: int = 0,
    idle: float = 1800.0,
    ready: Callable[[str], None],
    open_browser: bool = False,
) -> dict[str, Any]:
    """Serve ``store`` on 127.0.0.1:``port`` (0: any free port) until Ctrl-C or ``idle``
    seconds without an accepted request; ``ready(url)`` hears the URL (with its token)
    once the socket listens. Answers how it stopped."""
    from importlib.util import find_spec

    if any(find_spec(name) is None for name in _NEEDS):
        raise XbrainError("The viewer needs its optional packages: pip install 'xbrain[ui]'.")
    if not 0 <= port <= 65535:
        raise UsageError("--port must be 0-65535 (0: any free port).")
    if idle <= 0:
        raise UsageError("--idle must be a positive number of seconds.")
    store.core.existing()
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", port))
        listener.listen(64)
    except OSError as exc:
        listener.close()
        raise XbrainError(f"Cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}.") from None
    try:
        return _serve(store, listener, idle, ready, open_browser)
    finally:
        listener.close()


def _serve(
    store: Store,
    listener: socket.socket,
    idle: float,
    ready: Callable[[str], None],
    open_browser: bool,
) -> dict[str, Any]:
    """``serve`` once ``listener`` listens (the caller closes it)."""
    port = listener.getsockname()[1]
    token = secrets.token_urlsafe(24)
    url = f"http://127.0.0.1:{port}/{token}/"
    ctrl_c = _CtrlC()
    with ctrl_c:
        ready(url)  # the socket holds what comes before the server is up
        import uvicorn

        from .app import build
        from .guard import Guard, Idle
        from .viewer import Viewer

        quiet = Idle()
        app = Guard(build(Viewer(store, token, port)), token=token, port=port, idle=quiet)
        config = uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        stopped = {"stopped": "interrupted"}

        def watch() -> None:
            while not server.should_exit:
                if quiet.idle_for() >= idle:
                    stopped["stopped"] = "idle"
                    server.should_exit = True
                    return
                threading.Event().wait(min(1.0, idle / 4))

        if open_browser:  # on a thread: a browser webbrowser waits for (a text one, an
            import webbrowser  # unknown $BROWSER) would otherwise wait for this server

            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
        threading.Thread(target=watch, name="xbrain-ui-idle", daemon=True).start()
        ctrl_c.stops(server)
        if not ctrl_c.hit:
            server.run(sockets=[listener])
    if ctrl_c.hit:
        raise KeyboardInterrupt  # "Interrupted.", exit 130: as Ctrl-C anywhere else
    return {**stopped, "port": port}


class _CtrlC:
    """Ctrl-C noted, never raised at a random instant: from the printed URL on, a
    KeyboardInterrupt raised inside an import's lock callback was printed as ignored and
    lost (the viewer then served until --idle). While uvicorn runs, its own handler
    (which calls this one once it has shut down) stops it; before that, this one stops
    the server as soon as there is one. Outside the main thread (an API caller), or where
    Ctrl-C is ignored (a background job of a script), nothing changes."""

    def __init__(self) -> None:
        self.hit = False
        self._server: Any = None
        self._installed = False
        self._previous: Any = None

    def __enter__(self) -> _CtrlC:
        main = threading.current_thread() is threading.main_thread()
        if main and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            self._previous = signal.signal(signal.SIGINT, self._note)
            self._installed = True
        return self

    def __exit__(self, *exc: object) -> None:
        if self._installed:  # (None: a handler set from C, which signal cannot restore)
            previous = self._previous
            signal.signal(
                signal.SIGINT, signal.default_int_handler if previous is None else previous
            )

    def _note(self, signum: int, frame: object) -> None:
        self.hit = True
        if self._server is not None:
            self._server.should_exit = True

    def stops(self, server: Any) -> None:
        """Stop ``server`` on Ctrl-C from now on (at once if one came already)."""
        self._server = server
        if self.hit:
            server.should_exit = True
