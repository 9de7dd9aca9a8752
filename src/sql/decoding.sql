-- Decoding IDs: the time, node and sequence in an ID, in the server's layout
-- (snowflake.layout, snowflake.epoch) or in one given as an argument (foreign IDs).

CREATE FUNCTION snowflake_timestamp(id bigint) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
'Returns the time embedded in a snowflake ID, to the millisecond (the layout''s tick), in snowflake.layout and counted from snowflake.epoch.';

CREATE FUNCTION snowflake_parse(id bigint, OUT ts timestamptz, OUT node integer, OUT seq integer)
AS 'MODULE_PATHNAME', 'snowflake_parse'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint) IS
'Splits a snowflake ID into its time (ts), node and sequence number (seq).';

CREATE FUNCTION snowflake_timestamp(id bigint, layout text) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint, text) IS
'Returns the time embedded in a snowflake ID of the given layout, such as ''sonyflake'' or ''time=39,unit=10ms,node=16,seq=8,epoch=1409529600000''.';

CREATE FUNCTION snowflake_parse(id bigint, layout text, OUT ts timestamptz, OUT node integer, OUT seq integer)
AS 'MODULE_PATHNAME', 'snowflake_parse_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_parse(bigint, text) IS
'Splits a snowflake ID of the given layout into its time (ts), node and sequence number (seq).';

CREATE FUNCTION snowflake_layout(layout text,
    OUT name text, OUT spec text, OUT time_bits integer, OUT unit interval, OUT node_bits integer,
    OUT seq_bits integer, OUT epoch timestamptz, OUT nodes bigint, OUT ids_per_second bigint,
    OUT runs_out_at timestamptz)
AS 'MODULE_PATHNAME', 'snowflake_layout'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_layout(text) IS
'Describes a layout spec: its widths, tick, epoch, node count, IDs per second per node, and when its time field runs out.';
