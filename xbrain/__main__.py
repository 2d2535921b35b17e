"""``python -m xbrain``."""

from .cli import main

main()
