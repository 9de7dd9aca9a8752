# Django 3.2 on psycopg2 with snowflake keys (docs/clients.md, "Django"): the
# models of shop/ migrated into a fresh database, rows made by create(), save()
# and bulk_create(), every returned ID equal to the table's id::text with low
# bits set among them, rows read back by ID, JSON output, and makemigrations
# --check keeping the DEFAULT. The naive keys are shown failing, and so is a
# snowflake-typed key without the caster of shop/fields.py.
import json
import os

import django
import psycopg2
import pytest
from django.conf import settings

DB = "clients_django"
NODE = int(os.environ.get("SNOWFLAKE_NODE", "7"))
settings.configure(
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": DB, "USER": os.environ["PGUSER"],
                           "HOST": os.environ["PGHOST"], "PORT": os.environ["PGPORT"]}},
    INSTALLED_APPS=["shop"],
    USE_TZ=True,
)


@pytest.fixture(scope="module", autouse=True)
def database():
    """A fresh database (from template1: the extension and setup.sql's helpers), migrated with shop's migrations."""
    admin = psycopg2.connect(dbname="postgres")
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB}")
        cur.execute(f"CREATE DATABASE {DB}")
    admin.close()
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    yield
    from django.db import connection

    connection.close()


def check_ids(table, ids):
    """setup.sql's verdict on the IDs Django returned: 'ok' when they are the table's, one at least past a double."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT clients_check_ids(%s, %s)", [table, ",".join(str(i) for i in ids)])
        return cur.fetchone()[0]


@pytest.mark.parametrize("model_name, field", [("Order", "item"), ("Post", "title")])
def test_create_save_bulk_create_return_the_tables_ids(model_name, field):
    from shop import models

    model = getattr(models, model_name)
    one = model.objects.create(**{field: "one"})
    two = model(**{field: "two"})
    two.save()
    bulk = model.objects.bulk_create([model(**{field: f"b{n}"}) for n in range(300)])
    made = [one, two] + bulk
    assert all(type(m.pk) is int and (m.pk >> 12) & 1023 == NODE for m in made)
    assert check_ids(model._meta.db_table, [m.pk for m in made]) == "ok"
    for m in made:
        assert model.objects.get(pk=m.pk).pk == m.pk


def test_json_response_writes_a_number_that_a_double_rounds():
    from django.http import JsonResponse
    from shop.models import Order

    order = [o for o in Order.objects.all() if float(o.pk) != o.pk][0]
    raw = json.loads(JsonResponse({"id": order.pk}).content, parse_int=float)  # as JavaScript reads it
    assert int(raw["id"]) != order.pk
    # The recipe: send the ID as a string.
    fixed = json.loads(JsonResponse({"id": str(order.pk)}).content, parse_int=float)
    assert fixed["id"] == str(order.pk)


def test_migrations_keep_the_default():
    from django.core.management import call_command
    from django.db import connection

    call_command("makemigrations", "shop", check=True, dry_run=True, verbosity=0)  # SystemExit(1) on changes
    with connection.cursor() as cur:
        cur.execute("SELECT table_name, data_type || ' ' || coalesce(column_default, '') FROM information_schema.columns "
                    "WHERE column_name = 'id' AND table_name IN ('shop_order', 'shop_post')")
        assert dict(cur.fetchall()) == {"shop_order": "bigint snowflake_nextval()",
                                        "shop_post": "USER-DEFINED snowflake_nextval()"}


def test_trap_bigautofield_is_a_sequence():
    from shop.models import PlainOrder

    plain = PlainOrder.objects.create(item="plain")
    assert plain.pk < 1000  # bigserial's 1, 2, ...: not a snowflake ID


def test_trap_bigintegerfield_sends_null_past_the_database_default():
    from django.db import IntegrityError, connection, transaction
    from shop.models import NullOrder

    with connection.cursor() as cur:
        cur.execute("ALTER TABLE shop_nullorder ALTER id SET DEFAULT snowflake_nextval()")
    with pytest.raises(IntegrityError, match="null value"), transaction.atomic():
        NullOrder.objects.create(item="null")


def test_trap_snowflake_key_is_str_without_the_caster():
    from django.db import connection
    from django.db.backends.signals import connection_created
    from shop.fields import register_snowflake
    from shop.models import Post

    connection.close()
    connection_created.disconnect(register_snowflake)
    try:
        assert type(Post.objects.create(title="raw").pk) is str
    finally:
        connection_created.connect(register_snowflake)
        connection.close()
