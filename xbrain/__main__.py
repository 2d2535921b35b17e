"""``python -m xbrain``."""

from .launch import main

main()
