-- The snowflake type: a bigint in every way (same storage, I/O, binary
-- format; casts both ways without a function) except that it is not a
-- built-in type, so to_json/to_jsonb fall back to its output function and
-- emit the ID as a JSON string. It has no operators or operator classes of
-- its own: like varchar on text, it uses bigint's through the implicit
-- binary cast, so comparisons with bigint and integer constants, joins with
-- bigint columns, B-tree, hash and BRIN indexes are bigint's own.
CREATE TYPE snowflake;

CREATE FUNCTION snowflake_in(cstring) RETURNS snowflake
AS 'int8in' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_out(snowflake) RETURNS cstring
AS 'int8out' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_recv(internal) RETURNS snowflake
AS 'int8recv' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION snowflake_send(snowflake) RETURNS bytea
AS 'int8send' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

CREATE TYPE snowflake (
    INPUT = snowflake_in,
    OUTPUT = snowflake_out,
    RECEIVE = snowflake_recv,
    SEND = snowflake_send,
    LIKE = pg_catalog.int8,
    CATEGORY = 'N'
);

COMMENT ON FUNCTION snowflake_in(cstring) IS 'Input function of the snowflake type (bigint''s int8in).';
COMMENT ON FUNCTION snowflake_out(snowflake) IS 'Output function of the snowflake type (bigint''s int8out).';
COMMENT ON FUNCTION snowflake_recv(internal) IS 'Binary input function of the snowflake type (bigint''s int8recv).';
COMMENT ON FUNCTION snowflake_send(snowflake) IS 'Binary output function of the snowflake type (bigint''s int8send).';

COMMENT ON TYPE snowflake IS
'A snowflake ID: bigint''s storage, operators and indexes, but emitted as a string by to_json and to_jsonb.';

CREATE CAST (snowflake AS bigint) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (bigint AS snowflake) WITHOUT FUNCTION AS ASSIGNMENT;
-- So that INSERT ... VALUES (123) and integer parameters assign without a cast.
CREATE FUNCTION snowflake(integer) RETURNS snowflake
AS 'int48' LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake(integer) IS 'Converts an integer to the snowflake type; the assignment cast from integer.';

CREATE CAST (integer AS snowflake) WITH FUNCTION snowflake(integer) AS ASSIGNMENT;

-- An exact <@ for the type, so that id <@ '[2024-01-01,2024-01-02)' with an untyped literal (as
-- drivers send parameters) picks it instead of being ambiguous; same planner rewrite and indexes.
CREATE FUNCTION snowflake_between(id snowflake, r tstzrange) RETURNS boolean
AS 'MODULE_PATHNAME', 'snowflake_between'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
SUPPORT snowflake_between_support;

COMMENT ON FUNCTION snowflake_between(snowflake, tstzrange) IS
'Returns whether the time of snowflake ID id lies in r. Uses the index on id: the planner rewrites it as an ID range.';

CREATE OPERATOR <@ (LEFTARG = snowflake, RIGHTARG = tstzrange, FUNCTION = snowflake_between);

COMMENT ON OPERATOR <@ (snowflake, tstzrange) IS
'Is the time of the snowflake ID on the left in the range on the right? Same as snowflake_between().';
