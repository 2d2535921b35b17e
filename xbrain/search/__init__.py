"""Lexical search: tokenizer, jieba-identical segmenter, derived SQLite indexes, ranking.

Modules: ``tokenize`` and ``segment`` (terms), ``index`` (the BM25F index), ``query``
(the light fast path a fresh ``xbrain search`` process takes when the index is current),
``service`` (validation, catch-up and rebuild through git; ``--at``; write upkeep),
``skills`` (the skill index, Level 0 of skill recall), ``entrycache`` (recall's entry
index), ``freshness`` and ``upkeep`` (every lexical index kept in step with each commit).
The lowest of the retrieval packages: it imports none of ``semantic``, ``retrieval`` or
``recall``. Importing this package imports nothing else, so the fast path stays fast.
"""
