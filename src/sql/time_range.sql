-- Querying by time: time bounds as ID bounds, and a filter the planner turns into an ID range.

CREATE FUNCTION snowflake_min_id(ts timestamptz) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'Returns the smallest snowflake ID whose time is at or after ts (node 0, sequence 0 of that millisecond).';

CREATE FUNCTION snowflake_max_id(ts timestamptz) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'Returns the largest snowflake ID whose time is at or before ts (the last node and sequence of that tick: 1023 and 4095 on twitter).';

CREATE FUNCTION snowflake_id_range(r tstzrange) RETURNS int8range
AS 'MODULE_PATHNAME', 'snowflake_id_range'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_id_range(tstzrange) IS
'Returns exactly the snowflake IDs whose time lies in r, as an int8range; unbounded where r is.';

CREATE FUNCTION snowflake_range_first_id(r tstzrange) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_first_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_first_id(tstzrange) IS
'Returns the smallest snowflake ID whose time lies in r (0 when r is unbounded below); used by the planner for snowflake_between().';

CREATE FUNCTION snowflake_range_last_id(r tstzrange) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_range_last_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_range_last_id(tstzrange) IS
'Returns the largest snowflake ID whose time lies in r (below the first when none does); used by the planner for snowflake_between().';

CREATE FUNCTION snowflake_between_support(internal) RETURNS internal
AS 'MODULE_PATHNAME', 'snowflake_between_support'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_between_support(internal) IS
'Planner support for snowflake_between(): rewrites it as id >= first AND id <= last, so B-tree and BRIN indexes and partition pruning apply.';

CREATE FUNCTION snowflake_between(id bigint, r tstzrange) RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

COMMENT ON FUNCTION snowflake_between(bigint, tstzrange) IS
'Returns whether the time of snowflake ID id lies in r. Uses the index on id: the planner rewrites it as an ID range.';

CREATE OPERATOR <@ (LEFTARG = bigint, RIGHTARG = tstzrange, FUNCTION = snowflake_between);

COMMENT ON OPERATOR <@ (bigint, tstzrange) IS
'Is the time of the snowflake ID on the left in the range on the right? Same as snowflake_between().';

CREATE FUNCTION snowflake_backfill_id(ts timestamptz, seq integer DEFAULT 0) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_backfill_id'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_backfill_id(timestamptz, integer) IS
'Returns the ID for a past time ts on the node reserved by snowflake.backfill_node, with sequence seq (0 to 2^seq bits - 1: 4095 on twitter). No server issues IDs on that node, so backfilled IDs never repeat generated ones.';
