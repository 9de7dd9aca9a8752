-- Upgrade snowflake 0.1.0 to 0.2.0. CREATE EXTENSION snowflake (0.2.0) runs
-- snowflake--0.1.0.sql and then this script, so it is also the install path
-- for everything new in 0.2.0. Released scripts are never edited.

\echo Use "ALTER EXTENSION snowflake UPDATE TO '0.2.0'" to load this file. \quit

-- == Layouts and block reservation ==========================================



-- == Adoption: table conversion, text encodings, the snowflake type =========



-- == end ====================================================================
