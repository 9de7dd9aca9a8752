-- Native logical replication, both ways (PostgreSQL 16 and later), step 1 on each server:
-- publish the table.
CREATE PUBLICATION items_pub FOR TABLE items;
