"""Ingestion: capture a gallery bookmark library, pull pages from a source adapter, and
the distillation queue (``pending`` / ``distill``).

State lives in the store next to the records and is committed with them:
``ingestion/sources/<key>.json`` (pull progress), ``ingestion/captures/<aa>.json``
(what each resource was captured from) and ``ingestion/pending.json`` (the queue).
"""
