-- Public IDs: snowflake_mask(), snowflake_unmask() and the text form. Known
-- answers under NIST's FF1 sample key (the same as test/unit/mask_test.cpp's),
-- exact round trips, the permutation's range, a rotation, the primary key's
-- index behind WHERE id = snowflake_unmask_text($1), and every bad input.
CREATE EXTENSION snowflake;

-- No key yet: every function refuses with a hint, never an identity mapping.
SELECT snowflake_mask(1);
SELECT snowflake_unmask_text('A00000000001');

-- A malformed key list names the entry and never echoes the key.
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3';
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c, B:2b7e151628aed2a6abf7158809cf4f3x';
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c, A:000102030405060708090a0b0c0d0e0f';
SET snowflake.mask_keys = '2b7e151628aed2a6abf7158809cf4f3c';

SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c';
SHOW snowflake.mask_keys;
SELECT x, snowflake_mask(x) AS masked, snowflake_mask_text(x) AS public_id
FROM unnest(ARRAY[0, 1, 4611686018427387904, 9223372036854775807, 1311768467463790320]::bigint[]) x;

-- Round trips over real IDs (their low bits set) and the extremes; no two masks alike.
CREATE TEMP TABLE ids AS
SELECT snowflake_nextval() AS id FROM generate_series(1, 20000)
UNION ALL SELECT unnest(ARRAY[0, 1, 2, 4611686018427387904, 9223372036854775806, 9223372036854775807]::bigint[]);
SELECT count(*) AS ids,
       count(*) FILTER (WHERE snowflake_unmask(snowflake_mask(id)) <> id) AS bigint_mismatches,
       count(*) FILTER (WHERE snowflake_unmask_text(snowflake_mask_text(id)) <> id) AS text_mismatches,
       count(DISTINCT snowflake_mask(id)) = count(*) AS masks_distinct,
       count(*) FILTER (WHERE snowflake_mask(id) < 0) AS negative_masks,
       count(*) FILTER (WHERE length(snowflake_mask_text(id)) <> 12) AS wrong_length,
       count(*) FILTER (WHERE snowflake_mask_text(id) !~ '^A[0-9A-Za-z]{11}$') AS not_url_safe
FROM ids;
-- Consecutive IDs do not give ordered masks: about half of neighbours swap.
SELECT abs(avg((m_next > m)::int) - 0.5) < 0.05 AS order_hidden
FROM (SELECT snowflake_mask(id) AS m, lead(snowflake_mask(id)) OVER (ORDER BY id) AS m_next FROM ids) s
WHERE m_next IS NOT NULL;

-- Rotation: a new first key masks; text IDs of the old key resolve while it is listed.
CREATE TEMP TABLE old_public AS SELECT id, snowflake_mask_text(id) AS public_id, snowflake_mask(id) AS masked FROM ids;
SET snowflake.mask_keys = 'B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f, A:2b7e151628aed2a6abf7158809cf4f3c';
SHOW snowflake.mask_keys;
SELECT count(*) FILTER (WHERE snowflake_unmask_text(public_id) <> id) AS old_text_mismatches,
       count(*) FILTER (WHERE snowflake_mask_text(id) LIKE 'B%') AS new_texts_name_b,
       count(*) FILTER (WHERE snowflake_unmask_text(snowflake_mask_text(id)) <> id) AS new_text_mismatches,
       count(*) FILTER (WHERE snowflake_mask(id) = masked) AS bigint_masks_unchanged
FROM old_public;
SELECT snowflake_mask(0) AS aes256_mask_of_0;
-- Retired: the old key's text IDs now fail with 22P02 and a hint.
SELECT public_id AS old_public_id FROM old_public WHERE id = 1 \gset
SET snowflake.mask_keys = 'B:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
SELECT snowflake_unmask_text(:'old_public_id');
SET snowflake.mask_keys = 'A:2b7e151628aed2a6abf7158809cf4f3c';

-- The lookup an app makes: the primary key's index, no extra column.
CREATE TABLE posts (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), title text);
INSERT INTO posts (title) SELECT 'post ' || g FROM generate_series(1, 1000) g;
ANALYZE posts;
PREPARE by_public_id(text) AS SELECT title FROM posts WHERE id = snowflake_unmask_text($1);
EXPLAIN (COSTS OFF) EXECUTE by_public_id('A00000000001');
SELECT count(*) AS found
FROM posts p, LATERAL (SELECT title FROM posts WHERE id = snowflake_unmask_text(snowflake_mask_text(p.id))) f
WHERE f.title = p.title;

-- Bad inputs: negative IDs (22003), text that is no public ID (22P02), NULL in, NULL out.
SELECT snowflake_mask(-1);
SELECT snowflake_unmask(-9223372036854775808);
SELECT snowflake_mask_text(-5);
SELECT snowflake_unmask_text('');
SELECT snowflake_unmask_text('A0000000000');
SELECT snowflake_unmask_text('A000000000000');
SELECT snowflake_unmask_text('A00000-00000');
SELECT snowflake_unmask_text('-00000000000');
SELECT snowflake_unmask_text('Azzzzzzzzzzz');
SELECT snowflake_unmask_text('Q00000000001');
SELECT snowflake_unmask_text(repeat('x', 200));
-- Each bad input's SQLSTATE.
CREATE FUNCTION pg_temp.sqlstate_of(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT statement, pg_temp.sqlstate_of(statement) AS sqlstate FROM unnest(ARRAY[
    'SELECT snowflake_mask(-1)', 'SELECT snowflake_unmask(-1)', 'SELECT snowflake_mask_text(-1)',
    'SELECT snowflake_unmask_text(''A0000000000'')', 'SELECT snowflake_unmask_text(''A00000-00000'')',
    'SELECT snowflake_unmask_text(''Azzzzzzzzzzz'')', 'SELECT snowflake_unmask_text(''Q00000000001'')',
    'SET snowflake.mask_keys = ''A:00''', 'ALTER ROLE CURRENT_USER SET snowflake.mask_keys = ''A:00''']) statement;
RESET snowflake.mask_keys;
SELECT pg_temp.sqlstate_of('SELECT snowflake_mask(1)') AS no_key;
SELECT snowflake_mask(NULL) IS NULL AS null_in_null_out, snowflake_unmask_text(NULL) IS NULL AS text_null;
-- Volatility: STABLE (the key is a setting), so no index or generated column may use it.
SELECT proname, provolatile, proparallel FROM pg_proc WHERE proname LIKE 'snowflake%mask%' ORDER BY proname;
CREATE TABLE gen (id bigint, pub bigint GENERATED ALWAYS AS (snowflake_mask(id)) STORED);
RESET snowflake.mask_keys;
