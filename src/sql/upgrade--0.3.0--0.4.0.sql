-- Upgrade snowflake 0.3.0 to 0.4.0: only what changed since 0.3.0. The build
-- writes snowflake--0.3.0--0.4.0.sql from this file, replacing each
-- "-- @include FILE" line with that source file, its CREATE FUNCTION as
-- CREATE OR REPLACE FUNCTION (so include only files of functions and their
-- comments and grants). A fresh CREATE EXTENSION runs the full install script
-- instead; the upgrade suite checks that both reach the same catalog. At
-- release the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.4.0'" to load this file. \quit

-- snowflake_state(): whether IDs can be issued now, and if not why, since when and until when.
-- @include src/sql/generator.sql
