// Integration tests of what the node check's worker trusts (issue 34, items 1
// and 10): a plain role that owns snowflake.database cannot make the worker
// run its code, the installer's default privileges give no role but the
// extension's owner write on the claims, and a claim that no server could have
// written (a heartbeat at infinity, a node outside the layout, control
// characters) is ignored and reported once, not obeyed.
#include "server.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// A server on node 3 checking every second in database postgres, where the extension is installed.
struct Checked {
	Server server;
	explicit Checked(const std::string &name)
	    : server(name, {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1"}) {}
};

// Starts c's server, creates the extension and inserts these claims of other servers (each a VALUES
// list of snowflake_node_check.claims), as replication would bring them; a connection as postgres.
pqxx::connection with_claims(Checked &c, std::initializer_list<std::string> claims) {
	if (!c.server.start())
		throw std::runtime_error("the server did not start: " + c.server.log());
	{
		pqxx::connection admin = c.server.connect();
		exec(admin, {"CREATE EXTENSION snowflake"});
		for (const std::string &values : claims)
			exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES (" + values + ")"});
	}
	return c.server.connect();
}

// A server on node 3 checking every 30 s, the extension created and these claims of other servers
// inserted (as with_claims), then woken by a reload so that a pass has claimed node 3 before it
// returns. With such an interval, only the wake-up at a reload makes a pass come soon.
void checking_rarely(Checked &c, std::initializer_list<std::string> claims) {
	c.server.append_conf("snowflake.node_check_interval = 30");
	pqxx::connection admin = with_claims(c, claims);
	exec(admin, {"SELECT pg_reload_conf()"});
	if (!wait_until([&] { return text_of(c.server, "SELECT node_check FROM snowflake_node_status()") == "ok"; }, 20s))
		throw std::runtime_error("no pass claimed node 3: " + c.server.log());
}

// Moves the server of conn to node by a reload and, as soon as the postmaster has published the node
// (sooner than a pass of the node check could end under it), asks for an ID there: that call's
// SQLSTATE, "" when it issued.
std::string first_call_after_a_reload_onto(pqxx::connection &conn, int node) {
	const std::string n = std::to_string(node);
	{
		pqxx::nontransaction outside{conn}; // ALTER SYSTEM: no transaction block
		outside.exec("ALTER SYSTEM SET snowflake.node = " + n);
	}
	return sqlstate_of(conn, "DO $$ BEGIN PERFORM pg_reload_conf(); "
	                         "WHILE (SELECT node FROM snowflake_node_status()) IS DISTINCT FROM " + n + " LOOP "
	                         "IF clock_timestamp() > now() + interval '10 s' THEN RAISE 'the reload was not seen'; "
	                         "END IF; END LOOP; PERFORM snowflake_nextval(); END $$");
}

// Moves the server of conn to node by a reload, with the claims locked until that first call is seen
// waiting (so that the pass under node cannot end first), and returns its SQLSTATE ("" when it issued);
// waited says whether it was seen waiting.
std::string first_call_while_the_pass_is_held(Checked &c, int node, bool &waited) {
	pqxx::connection admin = c.server.connect();
	pqxx::connection holder = c.server.connect();
	pqxx::work hold{holder};
	hold.exec("LOCK TABLE snowflake_node_check.claims");
	pqxx::connection calling = c.server.connect();
	const int pid = calling.backendpid();
	std::atomic<bool> done{false};
	std::string sqlstate = "none";
	std::thread call([&] {
		try {
			sqlstate = first_call_after_a_reload_onto(calling, node);
		} catch (const std::exception &e) {
			sqlstate = e.what();
		}
		done = true;
	});
	waited = wait_until(
	    [&] {
		    return done || query_int(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = " + std::to_string(pid) +
		                                        " AND wait_event_type = 'Extension'") == 1;
	    },
	    10s) && !done;
	hold.commit(); // the pass under node goes on
	call.join();
	return sqlstate;
}

// A reload onto a node another server claimed first costs no ID (issue 34, item 6): the first call
// under the new node waits for a pass of the node check under it, which the reload wakes at once, and
// is refused. Before, calls issued until that pass ended (13 rows in 0.5 s in multimaster-pglogical);
// 0.5.0 issued for a whole interval. A call that does not wait issues on node 5, and the test fails.
TEST(NodeCheck, AReloadOntoATakenNodeCostsNoId) {
	Checked c("check_reload_taken");
	checking_rarely(c, {"'4242', 1, 5, 'peer:5432', now() - interval '1 day', now() - interval '1 hour'"});
	pqxx::connection admin = c.server.connect();
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3");
	const long long issued = query_int(admin, "SELECT ids_issued FROM snowflake_stats()");
	bool waited = false;
	EXPECT_EQ(first_call_while_the_pass_is_held(c, 5, waited), "SN001") << c.server.log();
	EXPECT_TRUE(waited);
	EXPECT_EQ(query_int(admin, "SELECT ids_issued FROM snowflake_stats()"), issued) << "an ID was issued on node 5";
	EXPECT_EQ(text_of(c.server, "SELECT node_check || ': ' || split_part(node_conflict, ',', 1) "
	                            "FROM snowflake_node_status()"),
	          "node conflict: refusing: peer:5432 (4242:1)");
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001");
}

// A reload back onto the node of the last ID waits for its pass too: the server issued on node 3, moved
// to 5 without issuing there, and another server claimed 3 meanwhile. Before, the fast path, which
// issues under the node of the last ID without a step, issued on node 3 at once, until the pass ended.
TEST(NodeCheck, AReloadBackOntoTheNodeOfTheLastIdCostsNoIdEither) {
	Checked c("check_reload_back");
	checking_rarely(c, {});
	pqxx::connection admin = c.server.connect();
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3");
	pqxx::nontransaction{admin}.exec("ALTER SYSTEM SET snowflake.node = 5");
	exec(admin, {"SELECT pg_reload_conf()"});
	const std::string own = "SELECT node::text FROM snowflake_node_check.claims c, pg_control_system() s "
	                        "WHERE c.system_identifier = s.system_identifier::text";
	ASSERT_TRUE(wait_until([&] { return text_of(c.server, own) == "5"; }, 20s)) << c.server.log(); // claimed 5
	exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES "
	             "('4242', 1, 3, 'peer:5432', now() - interval '1 day', now() - interval '1 hour')"});
	const long long issued = query_int(admin, "SELECT ids_issued FROM snowflake_stats()");
	bool waited = false;
	EXPECT_EQ(first_call_while_the_pass_is_held(c, 3, waited), "SN001") << c.server.log();
	EXPECT_TRUE(waited);
	EXPECT_EQ(query_int(admin, "SELECT ids_issued FROM snowflake_stats()"), issued) << "an ID was issued on node 3";
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001");
}

// A reload onto a free node, and back onto this server's own, issues at once: the first call under
// each waits only for the pass the reload wakes, which finds no other claim, and is never refused by
// the server's own claim.
TEST(NodeCheck, AReloadOntoAFreeNodeIssuesAtOnce) {
	Checked c("check_reload_free");
	checking_rarely(c, {"'4242', 1, 5, 'peer:5432', now() - interval '1 day', now() - interval '1 hour'"});
	pqxx::connection admin = c.server.connect();
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3");
	for (const int node : {7, 3}) {
		EXPECT_EQ(first_call_after_a_reload_onto(admin, node), "") << node << ": " << c.server.log();
		EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), std::to_string(node));
		EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "ok") << node;
	}
	EXPECT_EQ(c.server.log().find("is claimed by another server"), std::string::npos) << c.server.log();
}

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
	pqxx::connection admin =
	    with_claims(c, {"'4242', 1, 3, 'forger:5432', now() - interval '1 day', 'infinity'",
	                    "'4343', 1, 3, 'early:5432', '-infinity', now()",
	                    "'4444', 1, 5000, E'far:5432\\nLOG:  forged line', now() - interval '1 day', now()"});
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

// Claims a publisher could send to move the check without breaking a rule the worker checks: one
// under this server's name, older than its cluster, which its own past after a pg_upgrade would be,
// under the system identifier of the server it refuses for; and one that began ten years ahead on its
// node. The first hides only itself: the refusal stands (before, every claim of that system identifier
// counted as this server's past, and it issued). The second is believed by no check and moves
// nothing: this server's own claim on a node it joins is not dated after it.
TEST(NodeCheck, ForgedClaimsNeitherHideAnotherNorMoveThisServersPlace) {
	Checked c("check_forged_past");
	pqxx::connection admin =
	    with_claims(c, {"'4242', 1, 3, 'peer:5432', now() - interval '1 day', now() - interval '1 hour'",
	                    "'4343', 1, 5, 'ahead:5432', now() + interval '10 years', now()"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001");
	const std::string own = "FROM snowflake_node_check.claims c, pg_control_system() s "
	                        "WHERE c.system_identifier = s.system_identifier::text";
	const std::string name = text_of(c.server, "SELECT c.server " + own);
	exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES ('4242', 999, 7, '" + name +
	             "', '2000-01-01', '2000-01-01')"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "node conflict: refusing");
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001") << "a forged past hid the other claim";
	{
		pqxx::nontransaction outside{admin}; // ALTER SYSTEM: no transaction block
		outside.exec("ALTER SYSTEM SET snowflake.node = 5");
	}
	exec(admin, {"SELECT pg_reload_conf()"});
	ASSERT_TRUE(wait_until([&] { return text_of(c.server, "SELECT c.node::text " + own) == "5"; }, 20s))
	    << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT (c.started_at < now() + interval '1 hour')::text " + own), "true");
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "5");
}

// A claim on this server's node stands however old it is, whatever the other server's clock or
// interval, until its server moves it or an operator releases it (issue 34, items 4 and 8). 0.5.0
// ignored a claim whose heartbeat was three intervals and 10 s old by this server's clock: one from a
// peer that went silent (a partition, lag, a frozen server), or whose clock was 25 s behind, lifted the
// refusal, and both servers issued on one node.
TEST(NodeCheck, AClaimStandsHoweverOldUntilItIsReleasedAsTheHintSays) {
	Checked c("check_fails_closed");
	pqxx::connection admin =
	    with_claims(c, {"'4242', 1, 3, 'silent:5432', now() - interval '1 day', now() - interval '1 hour'"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "node conflict: refusing");
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001");
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "SN001") << "silence lifted the refusal";
	// The refusal's HINT, followed as written.
	const std::string log = c.server.log();
	const std::string hint = "SELECT snowflake_release_claim('4242:1') in database \"postgres\"";
	ASSERT_NE(log.find(hint), std::string::npos) << log;
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_release_claim('4242:2')"), "P0002"); // no such claim
	exec(admin, {"CREATE ROLE plain LOGIN"});
	pqxx::connection plain{c.server.conninfo() + " user=plain"};
	EXPECT_EQ(sqlstate_of(plain, "SELECT snowflake_release_claim('4242:1')"), "42501");
	EXPECT_EQ(query_int(admin, "SELECT snowflake_release_claim('4242:1')"), 1);
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "ok");
	EXPECT_EQ(sqlstate_of(admin, "SELECT snowflake_nextval()"), "");
}

// A server that issues nothing writes nothing for the check (issue 34, item 3): its claim is written
// when it is new or changed, and again only after IDs were issued. 0.5.0 deleted and inserted it at
// every pass: 1,080 WAL records in 3 idle minutes.
TEST(NodeCheck, AnIdleServerWritesNoClaim) {
	Checked c("check_idle");
	ASSERT_TRUE(c.server.start());
	pqxx::connection admin = c.server.connect();
	exec(admin, {"CREATE EXTENSION snowflake"});
	const std::string own = "SELECT heartbeat::text FROM snowflake_node_check.claims WHERE system_identifier = "
	                        "(SELECT system_identifier::text FROM pg_control_system())";
	ASSERT_TRUE(wait_until([&] { return query_int(admin, "SELECT count(*) FROM snowflake_node_check.claims") == 1; },
	                       20s));
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	const std::string written = text_of(c.server, own);
	for (int i = 0; i < 3; ++i)
		ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, own), written) << "an idle server wrote its claim again";
	exec(admin, {"SELECT snowflake_nextval()"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_NE(text_of(c.server, own), written) << "IDs were issued, and the claim was not written again";
}

// A promoted standby keeps its primary's place on the node (issue 34, item 9): a stray server that
// claimed the node after the primary stays the later one. 0.5.0 gave the promoted server a new claim
// from the promotion on, which made it the later one: it refused (SN001), naming the stray.
TEST(NodeCheck, APromotedStandbyKeepsItsPrimarysSeniority) {
	Checked primary("check_senior_primary");
	ASSERT_TRUE(primary.server.start());
	pqxx::connection admin = primary.server.connect();
	exec(admin, {"CREATE EXTENSION snowflake"});
	ASSERT_TRUE(wait_until([&] { return query_int(admin, "SELECT count(*) FROM snowflake_node_check.claims") == 1; },
	                       20s));
	exec(admin, {"INSERT INTO snowflake_node_check.claims VALUES ('4242', 1, 3, 'stray:5432', now(), now())"});
	ASSERT_TRUE(a_whole_pass(primary.server)) << primary.server.log();
	EXPECT_EQ(text_of(primary.server, "SELECT node_check FROM snowflake_node_status()"), "node conflict");
	Server standby("check_senior_standby", Server::StandbyOf{primary.server});
	ASSERT_TRUE(standby.start());
	ASSERT_TRUE(wait_until([&] { return query_int(admin, "SELECT count(*) FROM pg_stat_replication WHERE replay_lsn "
	                                                     ">= pg_current_wal_lsn()") == 1; },
	                       20s));
	primary.server.stop();
	ASSERT_TRUE(standby.promote());
	ASSERT_TRUE(a_whole_pass(standby)) << standby.log();
	EXPECT_EQ(text_of(standby, "SELECT node_check FROM snowflake_node_status()"), "node conflict") << standby.log();
	pqxx::connection promoted = standby.connect();
	EXPECT_EQ(sqlstate_of(promoted, "SELECT snowflake_nextval()"), "");
}

// An aggregator that holds the claims of two other servers on one node says so (issue 34, item 11):
// 0.5.0 said 'ok' on every server while the aggregator's apply failed on a duplicate key.
TEST(NodeCheck, AServerHoldingTwoOtherClaimsOnOneNodeReportsBoth) {
	Checked c("check_aggregator");
	pqxx::connection admin = with_claims(c, {"'4242', 1, 5, 'writer-a:5432', now() - interval '1 hour', now()",
	                                         "'4343', 1, 5, 'writer-b:5432', now(), now()"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check || ': ' || node_conflict FROM snowflake_node_status()"),
	          "node conflict between others: node 5: writer-a:5432 (4242:1) and writer-b:5432 (4343:1)");
	EXPECT_NE(c.server.log().find("WARNING:  snowflake: two other servers claim one node, node 5"), std::string::npos)
	    << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3"); // it issues
	// One of them moved to a node of its own (its claim rewritten there): the report ends.
	exec(admin, {"UPDATE snowflake_node_check.claims SET node = 6 WHERE system_identifier = '4343'"});
	ASSERT_TRUE(a_whole_pass(c.server)) << c.server.log();
	EXPECT_EQ(text_of(c.server, "SELECT node_check FROM snowflake_node_status()"), "ok");
}

} // namespace
} // namespace snowflake::test
