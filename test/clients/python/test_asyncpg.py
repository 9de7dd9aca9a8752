# asyncpg with snowflake keys (docs/clients.md, "asyncpg"): a pool whose init=
# registers int8's binary codec for the snowflake type; rows inserted singly
# and in bulk into a bigint-keyed and a snowflake-keyed table (setup.sql's
# clients_make_tables), every returned ID equal to the table's id::text with
# IDs a double cannot hold among them, and rows read back by ID. Without the
# codec, a snowflake value arrives as str and an int for the column is refused.
import asyncio
import os

import asyncpg
import pytest

NODE = int(os.environ.get("SNOWFLAKE_NODE", "7"))


# The recipe docs/clients.md quotes: snowflake travels as int8 does, binary, as a Python int.
async def register_snowflake(conn):
    await conn.set_builtin_type_codec("snowflake", codec_name="int8")


async def made_and_read(pool, table):
    """Inserts one row, then 300 in one statement; returns the IDs, checked against the table and read back."""
    async with pool.acquire() as conn:
        one = await conn.fetchval(f"INSERT INTO {table} (v) VALUES ($1) RETURNING id", "one")
        rows = await conn.fetch(f"INSERT INTO {table} (v) SELECT unnest($1::text[]) RETURNING id",
                                [f"b{n}" for n in range(300)])
        ids = [one] + [r["id"] for r in rows]
        assert all(type(i) is int and (i >> 12) & 1023 == NODE for i in ids)
        assert await conn.fetchval("SELECT clients_check_ids($1, $2)", table, ",".join(map(str, ids))) == "ok"
        for i in ids:
            assert await conn.fetchval(f"SELECT id FROM {table} WHERE id = $1", i) == i
        return ids


@pytest.mark.parametrize("table", ["asyncpg_big", "asyncpg_sf"])
def test_pool_with_codec_gives_exact_ints(table):
    async def main():
        async with asyncpg.create_pool(min_size=1, max_size=2, init=register_snowflake) as pool:
            await pool.execute("SELECT clients_make_tables('asyncpg')")
            await made_and_read(pool, table)

    asyncio.run(main())


def test_trap_without_codec_snowflake_is_str_and_int_parameters_fail():
    async def main():
        conn = await asyncpg.connect()
        try:
            await conn.execute("SELECT clients_make_tables('asyncpg')")
            i = await conn.fetchval("INSERT INTO asyncpg_sf (v) VALUES ('raw') RETURNING id")
            assert type(i) is str
            # id = $1 resolves to bigint's operator, so the parameter is int8; a value for the column itself is not.
            assert await conn.fetchval("SELECT v FROM asyncpg_sf WHERE id = $1", int(i)) == "raw"
            with pytest.raises(asyncpg.DataError, match="expected str, got int"):
                await conn.execute("INSERT INTO asyncpg_sf (id, v) VALUES ($1, 'int')", int(i) + 1)
        finally:
            await conn.close()

    asyncio.run(main())
