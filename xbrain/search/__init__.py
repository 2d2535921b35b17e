"""Lexical recall: tokenizer, jieba-identical segmenter, derived SQLite index, ranking.

Modules: ``tokenize`` and ``segment`` (terms), ``index`` (the BM25F index), ``query``
(the light fast path a fresh ``xbrain search`` process takes when the index is current),
``service`` (validation, catch-up and rebuild through git; ``--at``; write upkeep).
Importing this package imports nothing else, so the fast path stays fast.
"""
