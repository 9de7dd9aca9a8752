-- The one step a table-list publication needs for the node check (test/servers/multimaster.sh,
-- test/servers/one_way.sh): its claims published with the table. A subscription that exists
-- already then needs ALTER SUBSCRIPTION ... REFRESH PUBLICATION, as for any table added.
ALTER PUBLICATION items_pub ADD TABLE snowflake_node_check.claims;
