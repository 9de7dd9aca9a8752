-- Upgrade snowflake 0.5.0 to 0.6.0: only what changed since 0.5.0. The build writes
-- snowflake--0.5.0--0.6.0.sql from this file, expanding each directive line (such as @new or
-- @replace) from the sources (CONTRIBUTING.md, Building). A fresh CREATE EXTENSION runs the
-- full install script instead; the upgrade suite checks that both reach the same catalog. At release
-- the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.6.0'" to load this file. \quit
