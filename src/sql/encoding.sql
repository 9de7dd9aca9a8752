-- Text encodings. Each returns snowflake_code, text whose collation is "C":
-- the alphabets are in ASCII order and the width is fixed, so codes sort
-- byte by byte exactly like the IDs, whatever the database's collation.
CREATE DOMAIN snowflake_code AS text COLLATE "C";

COMMENT ON DOMAIN snowflake_code IS
'A snowflake ID as fixed-width text (base32, base62 or hex); its "C" collation makes codes sort like the IDs.';

CREATE FUNCTION snowflake_to_base32(id bigint) RETURNS snowflake_code
AS 'MODULE_PATHNAME', 'snowflake_to_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_to_base32(bigint) IS
'Encodes a snowflake ID as 13 Crockford base32 digits (0-9, A-Z without I L O U), zero-padded, sorting like the ID.';

CREATE FUNCTION snowflake_to_base62(id bigint) RETURNS snowflake_code
AS 'MODULE_PATHNAME', 'snowflake_to_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_to_base62(bigint) IS
'Encodes a snowflake ID as 11 base62 digits (0-9, A-Z, a-z), zero-padded, sorting like the ID under COLLATE "C".';

CREATE FUNCTION snowflake_to_hex(id bigint) RETURNS snowflake_code
AS 'MODULE_PATHNAME', 'snowflake_to_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_to_hex(bigint) IS
'Encodes a snowflake ID as 16 lowercase hex digits, zero-padded, sorting like the ID.';

CREATE FUNCTION snowflake_from_base32(code text) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_from_base32(text) IS
'Decodes 13 Crockford base32 digits into a snowflake ID; accepts lowercase and I, L, O as 1, 1, 0.';

CREATE FUNCTION snowflake_from_base62(code text) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_from_base62(text) IS
'Decodes 11 base62 digits (case-sensitive) into a snowflake ID.';

CREATE FUNCTION snowflake_from_hex(code text) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_from_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_from_hex(text) IS
'Decodes 16 hex digits (either case) into a snowflake ID.';
