# The Django recipe (docs/clients.md): primary keys that the database fills with
# snowflake_nextval(). Django 3.2 has no db_default, so the DEFAULT rides in the
# column type; as AutoFields, Django leaves them out of INSERTs and reads them
# back with RETURNING, for create(), save() and bulk_create() alike.
import psycopg2.extensions
from django.db import models
from django.db.backends.signals import connection_created
from django.dispatch import receiver


# A bigint key that the database fills with snowflake_nextval().
class SnowflakeAutoField(models.BigAutoField):
    def db_type(self, connection):
        return "bigint DEFAULT snowflake_nextval()"


# The same with the snowflake type.
class SnowflakeTypeAutoField(models.BigAutoField):
    def db_type(self, connection):
        return "snowflake DEFAULT snowflake_nextval()"


# psycopg2 hands a snowflake column over as str: read it as int on every new connection.
@receiver(connection_created)
def register_snowflake(sender, connection, **kwargs):
    with connection.connection.cursor() as cur:
        cur.execute("SELECT 'snowflake'::regtype::oid")
        oid = cur.fetchone()[0]
    caster = psycopg2.extensions.new_type((oid,), "SNOWFLAKE", psycopg2.extensions.LONGINTEGER)
    psycopg2.extensions.register_type(caster, connection.connection)
