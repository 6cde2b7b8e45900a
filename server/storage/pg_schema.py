"""The PostgreSQL schema of a Parlour database: its versioned steps, as :data:`server.storage.schema.MIGRATIONS` are SQLite's.

The tables, columns and their meanings are SQLite's (see :mod:`server.storage.schema`), so both
engines run the same statements: ``INTEGER`` becomes ``BIGINT`` (SQLite's integers are
64-bit), ``REAL`` becomes ``DOUBLE PRECISION``, and flags stay 0 and 1. The version lives
in the one row of ``parlour_schema``, with the application id SQLite keeps in its header.

Versions follow SQLite's: PostgreSQL support began at version 10, whose step creates
everything at once; a later SQLite step gets a PostgreSQL step of the same version
(``tests/server/test_store.py`` checks that both lists end at the same version).

Step 12 is PostgreSQL's alone: ``moves`` loses its foreign key to ``tables``, whose check
ran a query and took a ``KEY SHARE`` lock on the table's row for every move (a WAL record
of a move's three; docs/BENCHMARKS.md, *PostgreSQL beside SQLite*). It is safe because the
server never writes a move before its table's row (one writer commits in order, and a table
is created, its commit awaited, before anyone can play on it; on a cluster only the table's
holder writes its moves), a deleted table's moves still go (a trigger, as the key's cascade
did), and nothing reads a move without its table (a restore joins them, a load and the
archive start from the table), so a moves row whose table is missing is never loaded.
"""

from __future__ import annotations

from .schema import Migration

__all__ = ["PG_MIGRATIONS", "SCHEMA_TABLE"]

SCHEMA_TABLE = "parlour_schema"
"""The table that holds the schema version and the application id (one row)."""

PG_MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        10,
        "every table of SQLite schema version 10",
        (
            f"""CREATE TABLE {SCHEMA_TABLE} (
                id             INTEGER PRIMARY KEY CHECK (id = 1),
                version        INTEGER NOT NULL,
                application_id BIGINT NOT NULL
            )""",
            "CREATE TABLE sessions (token TEXT PRIMARY KEY, name TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
            """CREATE TABLE tables (
                id           BIGINT PRIMARY KEY,
                game         TEXT NOT NULL,
                options      TEXT NOT NULL,
                seed         TEXT,
                seed_is_int  INTEGER NOT NULL DEFAULT 0,
                time_control TEXT,
                seat0_name   TEXT,
                seat1_name   TEXT,
                seat0_token  TEXT,
                seat1_token  TEXT,
                status       TEXT NOT NULL CHECK (status IN ('waiting', 'playing', 'over')),
                created      DOUBLE PRECISION NOT NULL,
                started      DOUBLE PRECISION,
                finished     DOUBLE PRECISION,
                outcome      TEXT,
                clocks       TEXT,
                seed_chosen  INTEGER NOT NULL DEFAULT 0,
                computer     TEXT,
                hints        INTEGER NOT NULL DEFAULT 0,
                rated        INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX tables_by_status_finished ON tables (status, finished)",
            """CREATE TABLE moves (
                table_id BIGINT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                ply      BIGINT NOT NULL,
                seat     INTEGER NOT NULL CHECK (seat IN (0, 1)),
                move     TEXT NOT NULL,
                forced   INTEGER NOT NULL DEFAULT 0,
                at       DOUBLE PRECISION NOT NULL,
                clock_ms BIGINT,
                other_ms BIGINT,
                running  INTEGER,
                PRIMARY KEY (table_id, ply)
            )""",
            """CREATE TABLE accounts (
                name_key      TEXT PRIMARY KEY,
                name          TEXT NOT NULL,
                secret_hash   TEXT NOT NULL,
                password_hash TEXT,
                created       DOUBLE PRECISION NOT NULL
            )""",
            """CREATE TABLE ratings (
                name_key   TEXT NOT NULL,
                name       TEXT NOT NULL,
                game       TEXT NOT NULL,
                family     TEXT NOT NULL,
                rating     DOUBLE PRECISION NOT NULL,
                deviation  DOUBLE PRECISION NOT NULL,
                volatility DOUBLE PRECISION NOT NULL,
                games      BIGINT NOT NULL,
                wins       BIGINT NOT NULL,
                draws      BIGINT NOT NULL,
                losses     BIGINT NOT NULL,
                updated    DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (name_key, game, family)
            )""",
            "CREATE INDEX ratings_by_family_rating ON ratings (game, family, rating, name_key)",
            "CREATE INDEX ratings_by_game_rating ON ratings (game, rating, name_key)",
            """CREATE TABLE rating_changes (
                table_id          BIGINT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                seat              INTEGER NOT NULL CHECK (seat IN (0, 1)),
                name_key          TEXT NOT NULL,
                name              TEXT NOT NULL,
                game              TEXT NOT NULL,
                family            TEXT NOT NULL,
                score             DOUBLE PRECISION NOT NULL,
                before            DOUBLE PRECISION NOT NULL,
                after             DOUBLE PRECISION NOT NULL,
                deviation_before  DOUBLE PRECISION NOT NULL,
                deviation_after   DOUBLE PRECISION NOT NULL,
                volatility_before DOUBLE PRECISION NOT NULL,
                volatility_after  DOUBLE PRECISION NOT NULL,
                at                DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (table_id, seat)
            )""",
            "CREATE INDEX rating_changes_by_player ON rating_changes (name_key, at)",
            "CREATE TABLE mutes (owner_key TEXT NOT NULL, muted_key TEXT NOT NULL, PRIMARY KEY (owner_key, muted_key))",
            """CREATE TABLE casual_games (
                name_key TEXT NOT NULL,
                game     TEXT NOT NULL,
                games    BIGINT NOT NULL,
                wins     BIGINT NOT NULL,
                draws    BIGINT NOT NULL,
                losses   BIGINT NOT NULL,
                PRIMARY KEY (name_key, game)
            )""",
            """CREATE TABLE chat (
                table_id BIGINT NOT NULL REFERENCES tables (id) ON DELETE CASCADE,
                seq      BIGINT NOT NULL,
                name     TEXT NOT NULL,
                text     TEXT NOT NULL,
                at       DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (table_id, seq)
            )""",
            # "only" is a reserved word in PostgreSQL: the one row's key is "id" here.
            "CREATE TABLE server_identity (id INTEGER PRIMARY KEY CHECK (id = 1), server_id TEXT NOT NULL)",
            "INSERT INTO server_identity (id, server_id) VALUES (1, replace(gen_random_uuid()::text, '-', ''))",
            # SQLite's json_valid/json_extract test of a set-aside table (server.storage.statements.IS_SET_ASIDE).
            """CREATE FUNCTION parlour_set_aside(outcome TEXT) RETURNS BOOLEAN LANGUAGE plpgsql IMMUTABLE AS $$
            BEGIN
                RETURN coalesce(jsonb_typeof(outcome::jsonb -> 'set_aside') <> 'null', false);
            EXCEPTION WHEN others THEN
                RETURN false;
            END
            $$""",
        ),
    ),
    Migration(
        11,
        "table leases: which node of a cluster holds each unfinished table, until when (server.cluster.leases)",
        (
            # run: the holding process (a node's name may be started again; the run never is), the token every fenced write checks
            """CREATE TABLE table_leases (
                table_id BIGINT PRIMARY KEY REFERENCES tables (id) ON DELETE CASCADE,
                node     TEXT NOT NULL,
                run      TEXT NOT NULL,
                expires  TIMESTAMPTZ NOT NULL
            )""",
            "CREATE INDEX table_leases_by_run ON table_leases (run)",
            "CREATE INDEX table_leases_by_expiry ON table_leases (expires)",
            # A write about a table held by a lease begins with SELECT parlour_fence(table, run): it fails the whole
            # transaction unless that run still holds the lease. FOR SHARE orders it against a claim (an UPDATE of the row).
            """CREATE FUNCTION parlour_fence(held BIGINT, holder TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
            BEGIN
                PERFORM 1 FROM table_leases WHERE table_id = held AND run = holder FOR SHARE;
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'parlour_lease_lost: table % is no longer held by this node', held USING ERRCODE = 'PL001';
                END IF;
                RETURN true;
            END
            $$""",
            # The fences of one group commit at once (server.storage.writer.merged_statements).
            """CREATE FUNCTION parlour_fence_all(held BIGINT[], holder TEXT) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
            DECLARE
                missing BIGINT;
            BEGIN
                PERFORM 1 FROM table_leases WHERE table_id = ANY (held) AND run = holder ORDER BY table_id FOR SHARE;
                SELECT wanted INTO missing FROM unnest(held) AS wanted
                    WHERE NOT EXISTS (SELECT 1 FROM table_leases WHERE table_id = wanted AND run = holder) LIMIT 1;
                IF missing IS NOT NULL THEN
                    RAISE EXCEPTION 'parlour_lease_lost: table % is no longer held by this node', missing USING ERRCODE = 'PL001';
                END IF;
                RETURN true;
            END
            $$""",
        ),
    ),
    Migration(
        12,
        "moves without the foreign key to tables (its check and row lock cost every move); a deleted table's moves go by a trigger",
        (
            # Why this is safe. The check the key made on every move is redundant: a table's row reaches the database
            # before any of its moves, in the same or an earlier commit, because one writer commits in order
            # (server.storage.writer.merged_statements keeps it) and a table is created before its first move is
            # played; on a cluster the table's holder alone writes its moves, after its row exists. Nothing reads a
            # move without its table: a restore joins moves to their tables, a load and the archive start from the
            # table's row, so a moves row whose table is gone (which no Parlour writes) is ignored, never loaded.
            # What the key's ON DELETE CASCADE did stays, by a trigger on the rare DELETE of a table.
            "ALTER TABLE moves DROP CONSTRAINT IF EXISTS moves_table_id_fkey",
            """CREATE FUNCTION parlour_delete_moves() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                DELETE FROM moves WHERE table_id = OLD.id;
                RETURN NULL;
            END
            $$""",
            "CREATE TRIGGER tables_delete_moves AFTER DELETE ON tables FOR EACH ROW EXECUTE FUNCTION parlour_delete_moves()",
        ),
    ),
    Migration(
        13,
        "moves without the CHECK on seat (PostgreSQL reads and plans a table's CHECK expression again for every statement)",
        (
            # Why this is safe. Only the server writes moves, and a move's seat is never a client's word: it is the
            # seat whose turn the game's state says it is (server.play), 0 or 1 by construction, as the SQLite schema
            # (which keeps its CHECK) and every restore expect. The CHECK cost each multi-row INSERT a stringToNode of
            # its expression and its planning (docs/BENCHMARKS.md, *PostgreSQL beside SQLite*: 11 % of the backend's
            # instructions a move row); NOT NULL and the primary key stay.
            "ALTER TABLE moves DROP CONSTRAINT IF EXISTS moves_seat_check",
        ),
    ),
)
"""Every PostgreSQL schema step in order; a new version appends one (never edit a released step)."""
