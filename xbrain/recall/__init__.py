"""Recall: what a prompt needs, within a budget, once per session (``route``).

``prompt`` reads the request, ``pathroute`` routes by a file's path, ``candidates`` is
what each kind looks like, ``entryscore`` and ``standing`` score entries, ``disclosure``
fills the budget, ``recallfuse`` fuses the legs per kind, ``session`` keeps what a
session saw, ``telemetry`` what recall showed and ``traces`` the tools a session called,
``learning`` the Stop hook's ask, ``projects`` the folders recall has seen, ``warm`` the
indexes built after a hook timed out. The top of the retrieval packages (recall →
retrieval → semantic → search). Importing this package imports nothing else: a hook
loads only the modules it uses.
"""
