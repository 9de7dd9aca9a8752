-- Upgrade snowflake 0.4.0 to 0.5.0: only what changed since 0.4.0. The build writes
-- snowflake--0.4.0--0.5.0.sql from this file, expanding each directive line (such as @new or
-- @replace) from the sources (CONTRIBUTING.md, Building). A fresh CREATE EXTENSION runs the
-- full install script instead; the upgrade suite checks that both reach the same catalog. At release
-- the built script is committed as it is and this file is removed.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.5.0'" to load this file. \quit

-- 0.4.0's own upgrade from 0.3.0, as released, granted again on functions that existed, and so recorded
-- the grants users had made on them in pg_init_privs as the extension's, which pg_dump then left out:
-- the initial privileges of every function go back to what the extension's scripts grant.
-- @init-privileges

-- snowflake_cluster_nodes() schema-qualifies every name in the probe it sends to each server, which runs it
-- with the connecting role's own search_path, and reports where each server's node came from.
-- @recreate snowflake_cluster_nodes()

-- snowflake_convert_column() refuses to alter a table the caller does not own itself (a CHECK constraint
-- would run its owner's code with the caller's rights) and quotes the WITH options of the views it
-- recreates; its steps are internal helpers.
-- @new snowflake_convert_target(regclass, name, text)
-- @new snowflake_convert_dependents(regclass, smallint)
-- @new snowflake_convert_check_owners(regclass, name, oid[], smallint[])
-- @new snowflake_convert_check_keys(regclass, name, oid[], smallint[], regclass)
-- @new snowflake_convert_check_citus(regclass, name, smallint, oid[], smallint[])
-- @new snowflake_convert_views(regclass, name, oid[], smallint[])
-- @new snowflake_convert_view_statements(oid[])
-- @new snowflake_convert_regrant(text[], text[])
-- @replace snowflake_convert_column(regclass, name)

-- snowflake_nextval() is PARALLEL RESTRICTED: it runs in a parallel plan's leader, so that
-- snowflake_lastval() is the statement's last ID.
-- @replace snowflake_nextval()

-- snowflake_adopt_layout() puts a changed epoch or layout on record above every ID issued before it.
-- @new snowflake_adopt_layout()

-- snowflake_node_status() reports where the node came from and what the node check found.
-- @new snowflake_node_status()

-- The node check: each server's claim on its node, in a schema of its own, and the function its
-- worker runs.
-- @new-schema snowflake_node_check
-- @new-table snowflake_node_check.claims

-- @new snowflake_claim_node(integer, text, text, integer, integer, timestamptz)
