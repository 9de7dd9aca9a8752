// Integration tests of what the node check's worker trusts (issue 34, items 1
// and 10): a plain role that owns snowflake.database cannot make the worker
// run its code, the installer's default privileges give no role but the
// extension's owner write on the claims, and a claim that no server could have
// written (a heartbeat at infinity, a node outside the layout, control
// characters) is ignored and reported once, not obeyed.
#include "server.hpp"

#include <gtest/gtest.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// A text value of one row and column, as postgres in database postgres.
std::string text_of(const Server &server, const std::string &query) {
	pqxx::connection conn = server.connect();
	pqxx::work tx{conn};
	return one_value<std::string>(tx, query);
}

// Waits until at least one whole pass of the node check has run since the call; false if none did in 20 s.
bool a_whole_pass(const Server &server) {
	for (int i = 0; i < 2; ++i) {
		const std::string since = text_of(server, "SELECT clock_timestamp()::text");
		if (!wait_until([&] { return text_of(server, "SELECT (checked_at > '" + since + "')::text FROM "
		                                             "snowflake_node_status()") == "true"; },
		                20s))
			return false;
	}
	return true;
}

// A server on node 3 checking every second in database postgres, where the extension is installed.
struct Checked {
	Server server;
	explicit Checked(const std::string &name)
	    : server(name, {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1"}) {}
};

// A plain role owning snowflake.database may create in public on PostgreSQL 15 (public belongs to
// pg_database_owner). It plants the exact operator the worker's arithmetic used to resolve,
// float8 * int4, and numeric * int4 besides, each recording who ran it and trying to make the role a
// superuser. A peer's claim makes the worker read rows through that arithmetic.
TEST(NodeCheck, RunsNothingAPlainDatabaseOwnerPlanted) {
	Checked c("check_planted");
	ASSERT_TRUE(c.server.start());
	pqxx::connection admin = c.server.connect();
	exec(admin, {"CREATE ROLE mallory LOGIN", "ALTER DATABASE postgres OWNER TO mallory",
	             "CREATE EXTENSION snowflake"});
	pqxx::connection mallory{c.server.conninfo() + " user=mallory"};
	exec(mallory, {"CREATE TABLE public.ran_as (who name, super boolean)",
	               "GRANT INSERT ON public.ran_as TO PUBLIC",
	               R"(CREATE FUNCTION public.times(double precision, integer) RETURNS double precision
	                  LANGUAGE plpgsql AS $$
	                  BEGIN
	                    INSERT INTO public.ran_as SELECT current_user, rolsuper FROM pg_catalog.pg_roles
	                      WHERE rolname OPERATOR(pg_catalog.=) current_user;
	                    BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
	                    RETURN $1 OPERATOR(pg_catalog.*) $2::double precision;
	                  END $$)",
	               R"(CREATE FUNCTION public.times(numeric, integer) RETURNS numeric
	                  LANGUAGE plpgsql AS $$
	                  BEGIN
	                    INSERT INTO public.ran_as SELECT current_user, rolsuper FROM pg_catalog.pg_roles
	                      WHERE rolname OPERATOR(pg_catalog.=) current_user;
	                    BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
	                    RETURN $1 OPERATOR(pg_catalog.*) $2::numeric;
	                  END $$)",
	               "CREATE OPERATOR public.* (FUNCTION = public.times, LEFTARG = double precision, RIGHTARG = integer)",
	               "CREATE OPERATOR public.* (FUNCTION = public.times, LEFTARG = numeric, RIGHTARG = integer)"});
	// The operator works for mallory herself: it is planted, not broken.
	exec(mallory, {"SELECT 2::double precision * 3"});
	EXPECT_EQ(query_int(mallory, "SELECT count(*) FROM public.ran_as"), 1);
	exec(mallory, {"DELETE FROM public.ran_as"});
	// A live, earlier claim on node 3 by another server, as replication would bring it.
	exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES ('4242', 1, 3, 'peer:5432', now() - interval '1 day', "
	             "now() + interval '1 minute')"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	// The pass read the peer's row (the worker refuses this server's node), and ran none of her code.
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "node conflict: refusing");
	EXPECT_EQ(query_int(admin, "SELECT count(*) FROM public.ran_as WHERE super"), 0) << c.server.log();
	EXPECT_EQ(query_int(admin, "SELECT count(*) FROM public.ran_as"), 0);
	EXPECT_EQ(text_of(c.server, "SELECT rolsuper::text FROM pg_roles WHERE rolname = 'mallory'"), "false");
}

// Default privileges that give an application role write on every new table give it none on the
// claims, nor CREATE on their schema; pg_monitor still reads them.
TEST(NodeCheck, DefaultPrivilegesGiveNoRoleWriteOnTheClaims) {
	Checked c("check_default_privileges");
	ASSERT_TRUE(c.server.start());
	pqxx::connection admin = c.server.connect();
	exec(admin, {"CREATE ROLE app LOGIN",
	             "ALTER DEFAULT PRIVILEGES GRANT ALL ON TABLES TO app",
	             "ALTER DEFAULT PRIVILEGES GRANT SELECT, INSERT, DELETE, TRUNCATE ON TABLES TO PUBLIC",
	             "ALTER DEFAULT PRIVILEGES GRANT ALL ON SCHEMAS TO app", "CREATE EXTENSION snowflake"});
	for (const char *role : {"app", "public"})
		for (const char *privilege : {"INSERT", "UPDATE", "DELETE", "TRUNCATE", "TRIGGER", "REFERENCES"})
			EXPECT_EQ(text_of(c.server, std::string("SELECT has_table_privilege('") + role +
			                                "', 'snowflake_node_check.claims', '" + privilege + "')::text"),
			          "false")
			    << role << " " << privilege;
	EXPECT_EQ(text_of(c.server, "SELECT has_schema_privilege('app', 'snowflake_node_check', 'CREATE')::text"), "false");
	EXPECT_EQ(text_of(c.server, "SELECT has_table_privilege('pg_monitor', 'snowflake_node_check.claims', 'SELECT')::text"),
	          "true");
	pqxx::connection app{c.server.conninfo() + " user=app"};
	EXPECT_EQ(sqlstate_of(app, "INSERT INTO snowflake_node_check.claims VALUES ('4242', 1, 3, 'forged', "
	                           "'-infinity', 'infinity')"),
	          "42501");
	EXPECT_EQ(sqlstate_of(app, "TRUNCATE snowflake_node_check.claims"), "42501");
}

// Claims no server could have written: on this server's node with a heartbeat at infinity (which
// 0.5.0 obeyed until a hand DELETE), one that began at -infinity, and one on a node outside the
// layout with control characters in its name. Each is ignored and reported once, its values escaped;
// the server keeps issuing.
TEST(NodeCheck, IgnoresAndReportsClaimsNoServerCouldHaveWritten) {
	Checked c("check_forged");
	ASSERT_TRUE(c.server.start());
	pqxx::connection admin = c.server.connect();
	exec(admin, {"CREATE EXTENSION snowflake",
	             "INSERT INTO snowflake_node_check.claims VALUES ('4242', 1, 3, 'forger:5432', "
	             "now() - interval '1 day', 'infinity')",
	             "INSERT INTO snowflake_node_check.claims VALUES ('4343', 1, 3, 'early:5432', '-infinity', now())",
	             "INSERT INTO snowflake_node_check.claims VALUES ('4444', 1, 5000, E'far:5432\\nLOG:  forged line', "
	             "now() - interval '1 day', now())"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "ok") << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3");
	const std::string log = c.server.log();
	EXPECT_EQ(occurrences(log, "ignores an invalid claim"), 3) << log;
	EXPECT_EQ(occurrences(log, "server \"forger:5432\", identity 4242:1"), 1) << log;
	EXPECT_NE(log.find("heartbeat is not finite"), std::string::npos) << log;
	EXPECT_NE(log.find("started_at is not finite"), std::string::npos) << log;
	EXPECT_NE(log.find("server \"far:5432\\x0aLOG:  forged line\""), std::string::npos) << log;
	EXPECT_NE(log.find("node 5000 is outside 0 to 1023"), std::string::npos) << log;
	EXPECT_EQ(log.find("far:5432\nLOG:  forged line"), std::string::npos) << log;
	// A valid claim on the node still counts: the check is not simply off.
	exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES ('4545', 1, 3, 'peer:5432', "
	             "now() - interval '1 day', now() + interval '1 minute')"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "node conflict: refusing");
}

} // namespace
} // namespace snowflake::test
