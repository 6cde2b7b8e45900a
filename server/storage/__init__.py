"""Where the server keeps what must outlive it, in SQLite (:mod:`server.store`) or PostgreSQL (:mod:`server.storage.postgres`).

:mod:`server.storage.opening` picks the engine from ``--db``: a ``postgresql://`` URL or a
file path. Nothing is imported here, so importing one module of the package loads no other.
"""
