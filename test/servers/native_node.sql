-- Native logical replication (test/servers/multimaster.sh both ways, test/servers/one_way.sh one
-- way), step 1 on each server that writes (psql variable all_tables: on or off): publish the
-- table. FOR ALL TABLES takes the node check's claims (snowflake_node_check.claims) in with it; a
-- table-list publication needs one more step for them, test/servers/native_claims.sql.
\if :all_tables
CREATE PUBLICATION items_pub FOR ALL TABLES;
\else
CREATE PUBLICATION items_pub FOR TABLE items;
\endif
