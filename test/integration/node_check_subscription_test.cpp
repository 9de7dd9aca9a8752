// Integration test of the node check beside a subscription owned by a role
// that is not a superuser (issue 34, item 2; PostgreSQL 16 and later, so it
// runs in the version matrix and is skipped on 15): such a subscription to a
// FOR ALL TABLES publication can be made and replicates the users' rows, the
// subscriber's check reports that it sees no claims through it, and the
// statements of its HINT let the claims arrive, after which a conflict behind
// the subscription is seen; and on PostgreSQL 19, a publication of all
// tables except the claims replicates to it with nothing to report.
#include "server.hpp"

#include <gtest/gtest.h>

#include <regex>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// A server on node n checking every second, with logical replication on and a role r that owns the
// table items and may make subscriptions (pg_create_subscription), as PostgreSQL 16 lets a DBA
// delegate replication.
struct Replicating {
	Server server;
	Replicating(const std::string &name, int node)
	    : server(name, {kPreload, "snowflake.node = " + std::to_string(node), "snowflake.node_check_interval = 1",
	                    "wal_level = logical", "wal_retrieve_retry_interval = '1s'"}) {}
	// Starts the server and makes the role, its table and (unless told not to) the extension; a
	// connection as postgres.
	pqxx::connection start(bool with_extension = true) {
		set_up(with_extension);
		return server.connect();
	}
	// Starts the server and makes the role (a member of pg_create_subscription from PostgreSQL 16 on,
	// where the role exists), its table and, when asked, the extension.
	void set_up(bool with_extension) {
		if (!server.start())
			throw std::runtime_error("the server did not start: " + server.log());
		pqxx::connection admin = server.connect();
		exec(admin, {"CREATE ROLE r LOGIN REPLICATION PASSWORD 'pw'",
		             "DO $$ BEGIN IF to_regrole('pg_create_subscription') IS NOT NULL THEN "
		             "GRANT pg_create_subscription TO r; END IF; END $$",
		             "GRANT CREATE ON DATABASE postgres TO r", "CREATE TABLE items (id bigint PRIMARY KEY, v integer)",
		             "ALTER TABLE items OWNER TO r"});
		if (with_extension)
			exec(admin, {"CREATE EXTENSION snowflake"});
	}
};

// Ten new rows of items, each with a new ID.
const std::string kTenRows = "INSERT INTO items SELECT snowflake_nextval(), 1 FROM generate_series(1, 10)";

// Lets r reach pub with a password only, as PostgreSQL requires of a subscription a role that is not a
// superuser owns; returns once pub asks r for one.
void let_r_in(Server &pub) {
	if (run("sed -i '1i local all r scram-sha-256' " + pub.data_file("pg_hba.conf")) != 0)
		throw std::runtime_error("pg_hba.conf could not be changed");
	pub.reload();
	const bool asks = wait_until([&] {
		try {
			pqxx::connection{pub.conninfo() + " user=r password="};
			return false;
		} catch (const pqxx::broken_connection &) {
			return true;
		}
	}, 10s);
	if (!asks)
		throw std::runtime_error("pg_hba.conf was not reloaded: " + pub.log());
}

// The CREATE SUBSCRIPTION of name (an SQL identifier, quoted as needed; its slot my_sub) to publication
// of pub, with r's password, and these options after a comma (", copy_data = false").
std::string create_subscription(const Server &pub, const std::string &publication, const std::string &name,
                                const std::string &options = "") {
	return "CREATE SUBSCRIPTION " + name + " CONNECTION '" + pub.conninfo() + " user=r password=pw' PUBLICATION " +
	       publication + " WITH (origin = none, slot_name = 'my_sub'" + options + ")";
}

// Subscription name of role r on sub to publication of pub, with options as create_subscription's
// (let_r_in first); a connection to sub as r.
pqxx::connection subscribe_as_r(const Server &sub, Server &pub, const std::string &publication,
                                const std::string &name = "s", const std::string &options = "") {
	let_r_in(pub);
	pqxx::connection as_r{sub.conninfo() + " user=r"};
	pqxx::nontransaction{as_r}.exec(create_subscription(pub, publication, name, options));
	return pqxx::connection{sub.conninfo() + " user=r"};
}

// The statements of the HINT logged on server after marker, up to the first text of end.
std::string hint_statements(const Server &server, const std::string &marker, const std::string &end) {
	const std::string log = server.log();
	const size_t hint = log.find("HINT:", log.find("sees no claims through subscription"));
	const size_t from = log.find(marker, hint);
	const size_t to = log.find(end, from);
	if (hint == std::string::npos || from == std::string::npos || to == std::string::npos)
		throw std::runtime_error("no HINT with \"" + marker + "\" in the log: " + log);
	return log.substr(from + marker.size(), to - from - marker.size());
}

// Runs the HINT the subscriber logged, as written: the statements its query returns there (as psql's
// \gexec would), as postgres, and the publisher's with "that user" being r.
void follow_the_hint(const Server &sub, const Server &pub) {
	pqxx::connection sub_admin = sub.connect(), pub_admin = pub.connect();
	const std::string query = hint_statements(sub, "end it with \\gexec): ", "; and on each one's publisher");
	exec(sub_admin, {text_of(sub, query)});
	const std::string there = hint_statements(sub, "let the subscription's user read them: ", ". Or give");
	exec(pub_admin, {std::regex_replace(there, std::regex("that user"), "r")});
}

// 0.5.0 refused the subscription itself (permission denied for the claims' schema). Now the users' rows
// replicate, and the subscriber reports 'incomplete' with a WARNING naming the subscription and its owner;
// the HINT's statements, run as written, bring the claims, and a server behind the subscription that moves
// onto the subscriber's node is then seen.
TEST(NodeCheckSubscription, ANonSuperusersSubscriptionReplicatesTheRowsAndItsHintBringsTheClaims) {
	Replicating pub("subscription-pub", 1);
	pqxx::connection pub_admin = pub.start();
	if (query_int(pub_admin, "SELECT current_setting('server_version_num')::int") < 160000)
		GTEST_SKIP() << "a subscription owned by a role that is not a superuser needs PostgreSQL 16";
	Replicating sub("subscription-sub", 2);
	pqxx::connection sub_admin = sub.start();
	exec(pub_admin, {"CREATE PUBLICATION allpub FOR ALL TABLES", kTenRows});
	// As after pg_upgrade from PostgreSQL 15, where the install gave pg_create_subscription nothing: the
	// subscription is refused until the grant many-servers.md gives for that case.
	exec(sub_admin, {"REVOKE USAGE ON SCHEMA snowflake_node_check FROM pg_create_subscription"});
	let_r_in(pub.server);
	{
		pqxx::connection refused{sub.server.conninfo() + " user=r"};
		EXPECT_THROW(pqxx::nontransaction{refused}.exec(create_subscription(pub.server, "allpub", "\"My Sub\"")),
		             pqxx::insufficient_privilege);
	}
	exec(sub_admin, {"GRANT USAGE ON SCHEMA snowflake_node_check TO pg_create_subscription"});
	pqxx::connection as_r = subscribe_as_r(sub.server, pub.server, "allpub", "\"My Sub\"");
	exec(pub_admin, {kTenRows});
	EXPECT_TRUE(wait_until([&] { return query_int(sub_admin, "SELECT count(*) FROM items") == 20; }, 30s))
	    << "the users' rows did not arrive: " << sub.server.log();

	EXPECT_TRUE(sub.server.wait_for_log(
	    "sees no claims through subscription \"My Sub\": its owner \"r\" may not apply them", 20s))
	    << sub.server.log();
	EXPECT_EQ(text_of(sub.server, "SELECT node_check FROM snowflake_node_status()"), "incomplete");
	const std::string pub_id = text_of(pub.server, "SELECT system_identifier::text FROM pg_control_system()");
	const std::string pub_claims = "SELECT count(*) FROM snowflake_node_check.claims WHERE system_identifier = '" +
	                               pub_id + "'";
	EXPECT_EQ(query_int(sub_admin, pub_claims), 0);

	follow_the_hint(sub.server, pub.server);
	EXPECT_TRUE(wait_until([&] { return query_int(sub_admin, pub_claims) == 1; }, 30s))
	    << "the publisher's claim did not arrive: " << sub.server.log();
	EXPECT_TRUE(wait_until([&] {
		return text_of(sub.server, "SELECT node_check FROM snowflake_node_status()") == "ok";
	}, 20s));

	// The claims now travel: the publisher moved onto the subscriber's node is seen there (it claimed the
	// node later, and the one way back carries nothing, so the subscriber warns and keeps issuing).
	pqxx::nontransaction{pub_admin}.exec("ALTER SYSTEM SET snowflake.node = 2");
	exec(pub_admin, {"SELECT pg_reload_conf()"});
	EXPECT_TRUE(wait_until([&] {
		return text_of(sub.server, "SELECT node_check FROM snowflake_node_status()") == "node conflict";
	}, 30s)) << sub.server.log();
	EXPECT_EQ(query_int(sub_admin, "SELECT count(*) FROM (SELECT snowflake_nextval()) n"), 1);
	pqxx::nontransaction{as_r}.exec("DROP SUBSCRIPTION \"My Sub\"");
}

// PostgreSQL 19 lets the publisher leave the claims out of a FOR ALL TABLES publication: the same
// subscription then replicates every other table, and the subscriber's check has nothing to report
// (it sees none of that publisher's claims, as with a table list).
TEST(NodeCheckSubscription, APublicationOfAllTablesExceptTheClaimsReplicatesWithNothingToReport) {
	Replicating pub("except-pub", 1);
	pqxx::connection pub_admin = pub.start();
	if (query_int(pub_admin, "SELECT current_setting('server_version_num')::int") < 190000)
		GTEST_SKIP() << "FOR ALL TABLES EXCEPT needs PostgreSQL 19";
	Replicating sub("except-sub", 2);
	pqxx::connection sub_admin = sub.start();
	exec(pub_admin, {"CREATE PUBLICATION nearly_all FOR ALL TABLES EXCEPT (TABLE snowflake_node_check.claims)",
	                 kTenRows});
	pqxx::connection as_r = subscribe_as_r(sub.server, pub.server, "nearly_all");
	EXPECT_TRUE(wait_until([&] { return query_int(sub_admin, "SELECT count(*) FROM items") == 10; }, 30s))
	    << "the users' rows did not arrive: " << sub.server.log();
	ASSERT_TRUE(a_whole_pass(sub.server));
	EXPECT_EQ(text_of(sub.server, "SELECT node_check FROM snowflake_node_status()"), "ok");
	EXPECT_EQ(occurrences(sub.server.log(), "cannot SET ROLE"), 0) << sub.server.log();
	pqxx::nontransaction{as_r}.exec("DROP SUBSCRIPTION s");
}

// A subscription made before its publisher had the claims: 0.5.0 on the subscriber stopped it, for
// every table, once the publisher created the extension (permission denied for the claims' schema).
// Now it skips the claims and replicates on; after REFRESH PUBLICATION it takes them in, cannot apply
// them, replicates on, and the check says 'incomplete'.
TEST(NodeCheckSubscription, ASubscriptionReplicatesOnWhenItsPublisherCreatesTheExtension) {
	Replicating pub("later-pub", 1);
	pqxx::connection pub_admin = pub.start(false);
	if (query_int(pub_admin, "SELECT current_setting('server_version_num')::int") < 160000)
		GTEST_SKIP() << "a subscription owned by a role that is not a superuser needs PostgreSQL 16";
	Replicating sub("later-sub", 2);
	pqxx::connection sub_admin = sub.start();
	exec(pub_admin, {"CREATE PUBLICATION allpub FOR ALL TABLES",
	                 "INSERT INTO items SELECT g, 1 FROM generate_series(1, 10) g"});
	pqxx::connection as_r = subscribe_as_r(sub.server, pub.server, "allpub");
	const auto rows_arrive = [&](int rows) {
		return wait_until([&] { return query_int(sub_admin, "SELECT count(*) FROM items") == rows; }, 30s);
	};
	EXPECT_TRUE(rows_arrive(10)) << sub.server.log();

	exec(pub_admin, {"CREATE EXTENSION snowflake", kTenRows}); // its claim is written at its first pass
	ASSERT_TRUE(a_whole_pass(pub.server));
	exec(pub_admin, {kTenRows});
	EXPECT_TRUE(rows_arrive(30)) << sub.server.log();
	EXPECT_EQ(occurrences(sub.server.log(), "permission denied"), 0) << sub.server.log();
	EXPECT_EQ(text_of(sub.server, "SELECT node_check FROM snowflake_node_status()"), "ok");

	pqxx::nontransaction{as_r}.exec("ALTER SUBSCRIPTION s REFRESH PUBLICATION");
	EXPECT_TRUE(sub.server.wait_for_log("sees no claims through subscription \"s\"", 20s)) << sub.server.log();
	exec(pub_admin, {kTenRows});
	EXPECT_TRUE(rows_arrive(40)) << sub.server.log();
	EXPECT_EQ(text_of(sub.server, "SELECT node_check FROM snowflake_node_status()"), "incomplete");
	pqxx::nontransaction{as_r}.exec("DROP SUBSCRIPTION s");
}

// Made with copy_data = false, the subscription takes the claims as ready at once, so its apply stops at
// the first claim its publisher writes, for every table: PostgreSQL applies the changes in order, and
// nothing lets it pass over a table its owner may not write (docs/many-servers.md says so). The check
// says 'incomplete' as with a copy, counting a second such subscription, and the HINT's statements, run
// as written, let the rows that waited behind the claim arrive, and the claims with them.
TEST(NodeCheckSubscription, WithoutACopyTheRowsWaitBehindAClaimUntilTheHintIsFollowed) {
	Replicating pub("nocopy-pub", 1);
	pqxx::connection pub_admin = pub.start();
	if (query_int(pub_admin, "SELECT current_setting('server_version_num')::int") < 160000)
		GTEST_SKIP() << "a subscription owned by a role that is not a superuser needs PostgreSQL 16";
	Replicating sub("nocopy-sub", 2);
	pqxx::connection sub_admin = sub.start();
	exec(pub_admin, {"CREATE PUBLICATION allpub FOR ALL TABLES",
	                 "CREATE PUBLICATION claimspub FOR TABLE snowflake_node_check.claims"});
	pqxx::connection as_r =
	    subscribe_as_r(sub.server, pub.server, "allpub", "s", ", copy_data = false, enabled = false");
	// A second such subscription, of the claims alone: the report counts it, and the HINT's query covers it.
	// Both are enabled at once, so that no pass sees one without the other.
	pqxx::nontransaction{as_r}.exec("CREATE SUBSCRIPTION t CONNECTION '" + pub.server.conninfo() +
	                                " user=r password=pw' PUBLICATION claimspub WITH (copy_data = false, "
	                                "enabled = false)");
	{
		pqxx::work both{as_r};
		both.exec("ALTER SUBSCRIPTION s ENABLE");
		both.exec("ALTER SUBSCRIPTION t ENABLE");
		both.commit();
	}
	exec(pub_admin, {kTenRows});
	ASSERT_TRUE(a_whole_pass(pub.server)); // the pass after IDs were issued writes the claim
	exec(pub_admin, {kTenRows});           // behind it
	EXPECT_TRUE(sub.server.wait_for_log("cannot SET ROLE to", 30s)) << sub.server.log();
	EXPECT_TRUE(sub.server.wait_for_log("sees no claims through subscription \"s\" (and 1 more): its owner", 20s))
	    << sub.server.log();
	EXPECT_EQ(text_of(sub.server, "SELECT node_check FROM snowflake_node_status()"), "incomplete");
	EXPECT_EQ(query_int(sub_admin, "SELECT count(*) FROM items"), 10) << "rows passed the claim: " << sub.server.log();
	const std::string query = hint_statements(sub.server, "end it with \\gexec): ", "; and on each one's publisher");
	EXPECT_EQ(query_int(sub_admin, "SELECT count(*) FROM (" + query + ") q"), 2);
	pqxx::nontransaction{as_r}.exec("DROP SUBSCRIPTION t"); // two subscriptions applying one claim would race
	follow_the_hint(sub.server, pub.server);
	EXPECT_TRUE(wait_until([&] { return query_int(sub_admin, "SELECT count(*) FROM items") == 20; }, 30s))
	    << "the rows behind the claim did not arrive: " << sub.server.log();
	EXPECT_TRUE(wait_until([&] {
		return text_of(sub.server, "SELECT node_check FROM snowflake_node_status()") == "ok";
	}, 20s)) << sub.server.log();
	pqxx::nontransaction{as_r}.exec("DROP SUBSCRIPTION s");
}

} // namespace
} // namespace snowflake::test
