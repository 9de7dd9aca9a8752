# SQLAlchemy 1.4 on psycopg2: a server-side default of snowflake_nextval(),
# bulk inserts, and a time filter with <@ that the planner turns into a range
# scan on the primary key's index.
import os
from datetime import datetime, timedelta, timezone

from sqlalchemy import BigInteger, Column, Text, create_engine, func, select, text
from sqlalchemy.orm import Session, declarative_base

NODE = int(os.environ.get("SNOWFLAKE_NODE", "7"))
Base = declarative_base()


# The recipe docs/clients.md quotes: the server fills the key.
class Order(Base):
    __tablename__ = "sa_orders"
    id = Column(BigInteger, primary_key=True, server_default=text("snowflake_nextval()"))
    item = Column(Text)


def engine():
    e = create_engine(
        "postgresql+psycopg2://{PGUSER}@{PGHOST}:{PGPORT}/{PGDATABASE}".format(**os.environ), future=True
    )
    Base.metadata.drop_all(e)
    Base.metadata.create_all(e)
    return e


def test_orm_insert_gets_server_id():
    with Session(engine()) as s:
        o = Order(item="book")
        s.add(o)
        s.commit()
        assert (o.id >> 12) & 1023 == NODE
        assert s.get(Order, o.id).item == "book"


def test_bulk_insert_and_time_filter_uses_index():
    e = engine()
    with Session(e) as s:
        s.add_all([Order(item=f"i{n}") for n in range(2000)])
        s.commit()
        ids = s.scalars(select(Order.id)).all()
        assert len(set(ids)) == 2000
        assert all((i >> 12) & 1023 == NODE for i in ids)
        now = datetime.now(timezone.utc)
        window = func.tstzrange(now - timedelta(hours=1), now + timedelta(minutes=1))
        q = select(func.count()).select_from(Order).where(Order.id.op("<@")(window))
        assert s.scalar(q) == 2000
        s.execute(text("ANALYZE sa_orders"))
        # An hour-long window before the rows: the planner reads the key's index.
        plan = s.execute(
            text("EXPLAIN SELECT count(*) FROM sa_orders WHERE id <@ tstzrange(:a, :b)"),
            {"a": now - timedelta(hours=2), "b": now - timedelta(hours=1)},
        ).scalars().all()
        assert any("sa_orders_pkey" in line for line in plan), plan
