"""The semantic leg (SPEC §14): ``vectors`` (embeddings as derived data, caught up from
the lexical indexes) and ``hybrid`` (which mode, the semantic leg, fusion by rank).

Above ``search``, below ``retrieval`` and ``recall``. Importing this package imports
nothing else: numpy and a model load only when a semantic leg runs.
"""
