// Finds the subscriptions of this database that cannot bring the claims
// (subscriptions.hpp): one query of the catalog, every name and operator
// pg_catalog's, and the report and HINT built from its row.
#include "subscriptions.hpp"

#include "claim_rules.hpp"

namespace snowflake {

bool subscription_cannot_bring_claims(char (&report)[192], char (&fix)[1024]) {
	fix[0] = '\0';
#if PG_VERSION_NUM < 160000
	(void)report;
	return false;
#else
	// Its owner applies the claims as their owner (run_as_owner off: it must be able to SET ROLE to them),
	// or as itself (run_as_owner on: it must hold INSERT, UPDATE, DELETE and TRUNCATE, which a publisher
	// may send); either way it looks them up through their schema.
	const char *query =
	    "SELECT s.oid, s.subname, r.rolname, pg_catalog.count(*) OVER () OPERATOR(pg_catalog.-) 1, "
	    "pg_catalog.array_to_string((pg_catalog.array_agg(s.oid) OVER ())[1:20], ', ') "
	    "FROM pg_catalog.pg_subscription s JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) s.subowner, "
	    "pg_catalog.pg_class c WHERE c.oid OPERATOR(pg_catalog.=) 'snowflake_node_check.claims'::pg_catalog.regclass "
	    "AND s.subdbid OPERATOR(pg_catalog.=) (SELECT d.oid FROM pg_catalog.pg_database d "
	    "WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()) "
	    "AND s.subenabled AND NOT r.rolsuper AND EXISTS (SELECT FROM pg_catalog.pg_subscription_rel sr "
	    "WHERE sr.srsubid OPERATOR(pg_catalog.=) s.oid AND sr.srrelid OPERATOR(pg_catalog.=) c.oid) "
	    "AND NOT (pg_catalog.has_schema_privilege(s.subowner, c.relnamespace, 'USAGE') AND CASE WHEN s.subrunasowner "
	    "THEN pg_catalog.has_table_privilege(s.subowner, c.oid, 'INSERT') "
	    "AND pg_catalog.has_table_privilege(s.subowner, c.oid, 'UPDATE') "
	    "AND pg_catalog.has_table_privilege(s.subowner, c.oid, 'DELETE') "
	    "AND pg_catalog.has_table_privilege(s.subowner, c.oid, 'TRUNCATE') "
	    "ELSE pg_catalog.pg_has_role(s.subowner, c.relowner, 'SET') END) ORDER BY s.subname LIMIT 1";
	if (SPI_execute(query, true, 1) != SPI_OK_SELECT || SPI_processed == 0)
		return false;
	// The first one's names, escaped as a claim's text is, for the report only: a role may put any character in a name.
	// The HINT carries no name, but a query that quotes them (%I) for the operator to run.
	char names[2][136];
	for (int col = 2; col <= 3; ++col)
		escape_claim_text(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, col), names[col - 2],
		                  sizeof(names[col - 2]));
	const char *more = spi_text(0, 4);
	snprintf(report, sizeof(report), "sees no claims through subscription \"%s\"%s%s%s: its owner \"%s\" may not apply them",
	         names[0], strcmp(more, "0") != 0 ? " (and " : "", strcmp(more, "0") != 0 ? more : "",
	         strcmp(more, "0") != 0 ? " more)" : "", names[1]);
	const char *oids = spi_text(0, 5); // the first 20: the pass after they are fixed names the rest
	snprintf(fix, sizeof(fix),
	         "Let its owner apply the claims as itself: as a superuser here, run the statements this query returns (in "
	         "psql, end it with \\gexec): SELECT pg_catalog.format('GRANT USAGE ON SCHEMA snowflake_node_check TO "
	         "%%1$I; GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON snowflake_node_check.claims TO %%1$I; ALTER "
	         "SUBSCRIPTION %%2$I SET (run_as_owner = true)', pg_catalog.pg_get_userbyid(s.subowner), s.subname) FROM "
	         "pg_catalog.pg_subscription s WHERE s.oid IN (%s); and on each one's publisher let the subscription's "
	         "user read them: GRANT USAGE ON SCHEMA snowflake_node_check TO that user; GRANT SELECT ON snowflake_node_check.claims "
	         "TO that user. Or give the subscription a superuser owner.",
	         oids);
	return true;
#endif
}

} // namespace snowflake
