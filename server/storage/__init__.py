"""Persistence: where the server keeps what must outlive it, in SQLite or PostgreSQL, and the one-server-per-database lock.

SQLite: :mod:`server.storage.sqlite` (its writer thread and group commit in
:mod:`~server.storage.writer`, schema and migrations in :mod:`~server.storage.schema`);
PostgreSQL: :mod:`server.storage.postgres` (schema in :mod:`~server.storage.pg_schema`,
SQLite's SQL rewritten by :mod:`~server.storage.dialect`). Both share the contract
(:mod:`~server.storage.store`), the rows (:mod:`~server.storage.rows`), the SQL written
(:mod:`~server.storage.statements`) and the typed writes and reads (:mod:`~server.storage.ops`).
:mod:`server.storage.opening` picks the engine from ``--db``: a ``postgresql://`` URL or a
file path. Nothing is imported here, so importing one module of the package loads no other.
"""
