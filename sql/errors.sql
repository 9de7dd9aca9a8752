-- Bad input to the decode functions: an ERROR with its SQLSTATE.
SELECT snowflake_timestamp(-1);
\echo :SQLSTATE
SELECT * FROM snowflake_parse(-1);
\echo :SQLSTATE
SELECT snowflake_timestamp(-9223372036854775808);
\echo :SQLSTATE
SELECT snowflake_timestamp('not a number');
\echo :SQLSTATE
SELECT snowflake_timestamp(9223372036854775808);
\echo :SQLSTATE
