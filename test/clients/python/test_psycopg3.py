# psycopg 3: the snowflake type arrives as text unless a loader is registered;
# registering int8's loaders for its OID and its array's OID (looked up with
# TypeInfo) makes it a Python int in text and binary cursors.
import os

import psycopg
import pytest
from psycopg.types import TypeInfo
from psycopg.types.numeric import Int8BinaryLoader, IntLoader

NODE = int(os.environ.get("SNOWFLAKE_NODE", "7"))


# The recipe docs/clients.md quotes: snowflake and snowflake[] load as int.
def register_snowflake(conn):
    info = TypeInfo.fetch(conn, "snowflake")
    conn.adapters.register_loader(info.oid, IntLoader)
    conn.adapters.register_loader(info.oid, Int8BinaryLoader)
    info.register(conn)  # snowflake[] uses the element loaders above


@pytest.fixture
def conn():
    with psycopg.connect() as c:
        c.execute("DROP TABLE IF EXISTS py_posts")
        c.execute("CREATE TABLE py_posts (id snowflake PRIMARY KEY DEFAULT snowflake_nextval(), title text)")
        yield c


def node_of(i):
    return (i >> 12) & 1023


def test_without_loader_snowflake_is_text(conn):
    (i,) = conn.execute("INSERT INTO py_posts (title) VALUES ('a') RETURNING id").fetchone()
    assert isinstance(i, str)


@pytest.mark.parametrize("binary", [False, True])
def test_loader_gives_int_and_arrays(conn, binary):
    register_snowflake(conn)
    cur = conn.cursor(binary=binary)
    (i,) = cur.execute("INSERT INTO py_posts (title) VALUES ('a') RETURNING id").fetchone()
    assert isinstance(i, int) and node_of(i) == NODE
    (arr,) = cur.execute("SELECT array_agg(id) FROM py_posts").fetchone()
    assert arr == [i]
    (title,) = cur.execute("SELECT title FROM py_posts WHERE id = %s", [i]).fetchone()
    assert title == "a"
