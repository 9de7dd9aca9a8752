# The models of the Django test (test_django.py): a bigint key and a
# snowflake-typed key from the recipe in fields.py, and the two naive keys a
# new user reaches for first, each kept to show how it fails.
from django.db import models

from shop.fields import SnowflakeAutoField, SnowflakeTypeAutoField


class Order(models.Model):
    id = SnowflakeAutoField(primary_key=True)
    item = models.TextField()


class Post(models.Model):
    id = SnowflakeTypeAutoField(primary_key=True)
    title = models.TextField()


# Naive: Django's own 64-bit key, which it declares bigserial: a sequence, not snowflake IDs.
class PlainOrder(models.Model):
    id = models.BigAutoField(primary_key=True)
    item = models.TextField()


# Naive: a plain bigint key whose DEFAULT is set in SQL: Django sends id = NULL itself.
class NullOrder(models.Model):
    id = models.BigIntegerField(primary_key=True)
    item = models.TextField()
