-- Public IDs: a keyed, reversible mask of snowflake IDs (FF1 over AES, keys
-- in snowflake.mask_keys; docs/public-ids.md). STABLE, not IMMUTABLE: the
-- result depends on that setting, which a superuser may change.
CREATE FUNCTION snowflake_mask(id bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_mask'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_mask(bigint) IS
'Masks a snowflake ID under the first key of snowflake.mask_keys: a keyed permutation of the layout''s IDs that hides time, node, sequence and order.';

CREATE FUNCTION snowflake_unmask(masked bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_unmask'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_unmask(bigint) IS
'The snowflake ID that snowflake_mask() turned into masked, under the first key of snowflake.mask_keys.';

CREATE FUNCTION snowflake_mask_text(id bigint) RETURNS text
AS 'MODULE_PATHNAME', 'snowflake_mask_text'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_mask_text(bigint) IS
'A snowflake ID as a 12-character public ID for URLs: the key''s ID, then its mask in 11 base62 digits.';

CREATE FUNCTION snowflake_unmask_text(public_id text) RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_unmask_text'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_unmask_text(text) IS
'The snowflake ID behind a public ID from snowflake_mask_text(), under whichever key of snowflake.mask_keys it names.';
