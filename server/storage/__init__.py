"""Persistence: the SQLite store (its writer thread, schema and migrations, rows), and the one-server-per-database lock."""
