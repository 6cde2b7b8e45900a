"""The PostgreSQL writer's pipeline (server.storage.pg_pipeline): a group commit of several statements as prepared
statements in one implicit transaction, on a real PostgreSQL server; and the text it sends."""

from __future__ import annotations

import asyncio

from server.storage.pg_pipeline import numbered, typed_params
from server.storage.postgres import PostgresStore
from server.storage.store import StoreError

from .test_store import move_row, table_row


def test_the_statement_text_numbers_its_parameters_and_keeps_a_literal_percent() -> None:
    sql = "UPDATE tables SET outcome = ? WHERE id = ? AND game LIKE 'oth%' AND options <> '?x'"
    assert numbered(sql) == "UPDATE tables SET outcome = $1 WHERE id = $2 AND game LIKE 'oth%' AND options <> '$3x'"
    assert numbered("INSERT OR IGNORE INTO mutes (owner_key, muted_key) VALUES (?, ?)") == (
        "INSERT INTO mutes (owner_key, muted_key) VALUES ($1, $2) ON CONFLICT DO NOTHING"
    )


def test_parameters_go_as_text_typed_by_their_python_type_and_others_are_left_to_psycopg() -> None:
    assert typed_params([None, True, 7, 0.5, "d3", [1, 2]]) == (
        (0, 20, 20, 701, 0, 1016), [None, b"1", b"7", b"0.5", b"d3", b"{1,2}"]
    )
    assert typed_params(["a\0b"]) is None  # PostgreSQL's text holds no NUL: psycopg's cursor refuses it with its error
    assert typed_params([b"bytes"]) is None and typed_params([object()]) is None


async def _prepared_on_writer(store: PostgresStore) -> set[str]:
    assert store._writer is not None
    cursor = await store._writer.execute("SELECT name FROM pg_prepared_statements")
    return {row[0] for row in await cursor.fetchall()}


async def _in_one_group(store: PostgresStore, *writes: "asyncio.Future[None] | asyncio.Task[None]") -> list[object]:
    return list(await asyncio.gather(*writes, return_exceptions=True))


async def test_a_group_of_several_statements_commits_as_prepared_statements(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        async with store._writer_gate:  # the writer is busy: these pile up into one group
            writes = [
                asyncio.ensure_future(store.create_table(table_row(1, status="playing"))),
                asyncio.ensure_future(store.append_move(1, move_row(1))),
                asyncio.ensure_future(store.save_session("tok", "ann")),
            ]
            await asyncio.sleep(0.05)
        assert await _in_one_group(store, *writes) == [None, None, None]
        assert store.commits == 1
        assert len({name for name in await _prepared_on_writer(store) if name.startswith("parlour_s")}) == 3
        assert [m.ply for m in store.load(1).moves] == [1] and store.sessions() == {"tok": "ann"}  # type: ignore[union-attr]


async def test_a_failing_statement_of_a_group_fails_its_own_write_alone_and_nothing_of_it_is_kept(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        await store.create_table(table_row(1, status="playing"))
        async with store._writer_gate:
            writes = [
                asyncio.ensure_future(store.save_session("a", "ann")),
                asyncio.ensure_future(store.write(("INSERT INTO sessions (token, name, created) VALUES (?, ?, ?)", ("b", "bob", 1.0)),
                                                  ("INSERT INTO tables (id, game, options, status, created) VALUES (?, ?, ?, ?, ?)",
                                                   (1, "othello", "{}", "waiting", 1.0)))),  # fmt: skip
                asyncio.ensure_future(store.append_move(1, move_row(1))),
            ]
            await asyncio.sleep(0.05)
        results = await _in_one_group(store, *writes)
        assert results[0] is None and results[2] is None, results
        assert isinstance(results[1], StoreError) and "duplicate key" in str(results[1])
        assert store.sessions() == {"a": "ann"}, "the failed write's first statement was kept"
        assert [m.ply for m in store.load(1).moves] == [1]  # type: ignore[union-attr]


async def test_a_statement_postgresql_cannot_prepare_with_these_types_goes_through_psycopg(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        # substr takes an integer: a bigint parameter does not resolve; psycopg sends 2 as a smallint, which does
        await store.write(("INSERT INTO sessions (token, name, created) VALUES (substr('xtok', ?), ?, ?)", (2, "ann", 1.0)))
        await store.write(("INSERT INTO sessions (token, name, created) VALUES (substr('xyz', ?), ?, ?)", (3, "bob", 1.0)))
        assert store.sessions() == {"tok": "ann", "z": "bob"}


async def test_text_with_a_nul_is_refused_in_its_write_alone(postgres_url: str) -> None:
    async with PostgresStore.open(postgres_url) as store:
        async with store._writer_gate:
            writes = [asyncio.ensure_future(store.save_session("a", "ann")), asyncio.ensure_future(store.save_session("b", "b\0b"))]
            await asyncio.sleep(0.05)
        results = await _in_one_group(store, *writes)
        assert results[0] is None and isinstance(results[1], StoreError) and "NUL" in str(results[1]), results
        assert store.sessions() == {"a": "ann"}
