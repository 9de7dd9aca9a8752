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

-- snowflake_node_origins() labels dropped and unknown origins and leaves them out of shared_node, and says
-- what it cannot tell on a Citus table; snowflake_cluster_nodes() is new.
-- @include src/sql/many_servers.sql

-- snowflake_convert_column() refuses a Citus distribution column with the steps that convert it, and drops
-- the old default before changing the type (Citus refuses the type change of a column with a sequence).
-- @include src/sql/convert.sql
