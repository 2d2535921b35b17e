"""The search command over both legs: ``run.search_store`` (the current index's fast
path, else hybrid when semantic recall is on, else the slow path) and ``operations``
(the slow path through git, a provider's candidates, reindex of every derived index and
the vectors, ``doctor``'s index and vector checks).

Above ``semantic`` and ``search``; ``recall`` asks it for resource candidates. Importing
this package imports nothing else.
"""
