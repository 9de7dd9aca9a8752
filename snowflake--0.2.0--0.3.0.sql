-- Upgrade snowflake 0.2.0 to 0.3.0: only what changed since 0.2.0. A fresh
-- CREATE EXTENSION runs the full snowflake--0.3.0.sql built from src/sql/
-- instead, and the upgrade suite checks that both reach the same catalog.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.3.0'" to load this file. \quit
