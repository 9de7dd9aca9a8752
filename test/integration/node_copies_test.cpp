// Integration tests of the node check's copies (issue 34, item 7): a copy of
// a server has its system identifier, and its claims reach the original (or
// the original's reach it) through a logical-replication subscription to the
// claims. 0.5.0 counted the original's live claim as the promoted copy's own
// past, and two clones on one timeline both stayed 'ok'. Now the old primary
// refuses once it sees its promoted copy's claim on a later timeline; the
// promoted copy refuses once its original writes its claim again; a clone
// whose own claim is written by the other takes an identity of its own and
// refuses as the later server. Each test then follows the refusal's HINT: a
// node of its own, or the release of a claim no server holds any more.
#include "server.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake::test {
namespace {

using namespace std::chrono_literals;

// A server on node 3 checking every second, with logical WAL so that a subscription can take its claims.
const std::vector<std::string> kLinkable = {kPreload, "snowflake.node = 3", "snowflake.node_check_interval = 1",
                                            "wal_level = logical"};

// The node check's status, then the server it names: "node_check: node_conflict".
std::string status_of(const Server &server) {
	return text_of(server, "SELECT node_check || ': ' || coalesce(node_conflict, '') FROM snowflake_node_status()");
}

// Waits until server's node check says it refuses IDs; false if it did not within 20 s.
bool refuses(const Server &server) {
	return wait_until([&] { return status_of(server).rfind("node conflict: refusing: ", 0) == 0; }, 20s);
}

// This cluster's system identifier, as the claims hold it.
std::string system_identifier(const Server &server) {
	return text_of(server, "SELECT system_identifier::text FROM pg_control_system()");
}

// Starts a server that issues IDs and claims node 3, publishing its claims (the publication travels with
// every copy of its data directory); it has written its claim when this returns.
void start_publishing(Server &server) {
	ASSERT_TRUE(server.start()) << server.log();
	create_and_issue(server, 10);
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE PUBLICATION claims FOR TABLE snowflake_node_check.claims"});
	ASSERT_TRUE(
	    wait_until([&] { return query_int(conn, "SELECT count(*) FROM snowflake_node_check.claims") == 1; }, 20s))
	    << server.log();
}

// Subscribes subscriber to publisher's claims, one way, copying none (the subscriber holds claims already):
// each claim publisher writes from now on reaches subscriber.
void subscribe(const Server &subscriber, const Server &publisher, const std::string &name) {
	pqxx::connection conn = subscriber.connect();
	pqxx::nontransaction outside{conn}; // CREATE SUBSCRIPTION makes a slot: no transaction block
	outside.exec("CREATE SUBSCRIPTION " + name + " CONNECTION '" + publisher.conninfo() +
	             "' PUBLICATION claims WITH (copy_data = false)");
}

// An original still running on node 3 and its promoted copy (a pg_basebackup standby, promoted), which
// keeps node 3 (the setting travels with the data) and has claimed it on timeline 2, its original's claim
// on timeline 1 counted as its own past.
struct PromotedCopy {
	Server original;
	std::unique_ptr<Server> copy;
	explicit PromotedCopy(const std::string &name) : original(name + "_original", kLinkable) {
		start_publishing(original);
		copy = std::make_unique<Server>(name + "_copy", Server::StandbyOf{original});
		EXPECT_TRUE(copy->start()) << copy->log();
		EXPECT_TRUE(copy->promote()) << copy->log();
		EXPECT_TRUE(wait_until([&] { return text_of(*copy, "SELECT count(*)::text FROM snowflake_node_check.claims "
		                                                   "WHERE timeline = 2") == "1"; },
		                       20s))
		    << copy->log();
		EXPECT_EQ(status_of(*copy), "ok: ");
	}
};

// Moves server to node, reloads, and waits until it issues there; whether it does, a whole pass later too.
bool moved_and_issuing(Server &server, int node) {
	server.append_conf("snowflake.node = " + std::to_string(node));
	server.reload();
	const std::string issued = "SELECT (snowflake_parse(snowflake_nextval())).node::text";
	return server.wait_for_setting("snowflake.node", std::to_string(node)) && a_whole_pass(server) &&
	       text_of(server, issued) == std::to_string(node) && status_of(server) == "ok: ";
}

// The old primary refuses once its promoted copy's claim on a later timeline reaches it (case a: a
// promoted copy, or this server is the old primary after a failover); the copy, which does not see the
// original's writes, keeps issuing. A node of its own, as the HINT says, lets the original issue again.
TEST(NodeCopies, TheOriginalRefusesOnceItsPromotedCopysClaimReachesIt) {
	PromotedCopy p("copies_old_primary");
	subscribe(p.original, *p.copy, "from_copy");
	pqxx::connection copy = p.copy->connect();
	EXPECT_EQ(sqlstate_of(copy, "SELECT snowflake_nextval()"), ""); // its next pass writes its claim again
	ASSERT_TRUE(refuses(p.original)) << status_of(p.original) << p.original.log();
	pqxx::connection original = p.original.connect();
	EXPECT_EQ(sqlstate_of(original, "SELECT snowflake_nextval()"), "SN001");
	const std::string sid = system_identifier(p.original);
	EXPECT_NE(status_of(p.original).find("(" + sid + ":2), a promoted copy of this server"), std::string::npos)
	    << status_of(p.original);
	EXPECT_NE(p.original.log().find("snowflake_release_claim('" + sid + ":2')"), std::string::npos)
	    << p.original.log();
	EXPECT_EQ(status_of(*p.copy), "ok: ");
	EXPECT_EQ(sqlstate_of(copy, "SELECT snowflake_nextval()"), "");
	EXPECT_TRUE(moved_and_issuing(p.original, 5)) << status_of(p.original) << p.original.log();
}

// The promoted copy refuses once its original, still running, writes its claim on the earlier timeline
// again (case b); the original, which does not see the copy's claim, keeps issuing. Once the original
// is gone for good, releasing its claim on the copy, as the HINT says, lets the copy issue again.
TEST(NodeCopies, APromotedCopyRefusesOnceItsRunningOriginalWritesAgain) {
	PromotedCopy p("copies_promoted");
	subscribe(*p.copy, p.original, "from_original");
	pqxx::connection original = p.original.connect();
	EXPECT_EQ(sqlstate_of(original, "SELECT snowflake_nextval()"), ""); // its next pass writes its claim again
	ASSERT_TRUE(refuses(*p.copy)) << status_of(*p.copy) << p.copy->log();
	pqxx::connection copy = p.copy->connect();
	EXPECT_EQ(sqlstate_of(copy, "SELECT snowflake_nextval()"), "SN001");
	const std::string sid = system_identifier(p.original);
	EXPECT_NE(status_of(*p.copy).find("(" + sid + ":1), the original this server was promoted from, still running"),
	          std::string::npos)
	    << status_of(*p.copy);
	const std::string hint = "SELECT snowflake_release_claim('" + sid + ":1') in database \"postgres\"";
	ASSERT_NE(p.copy->log().find(hint), std::string::npos) << p.copy->log();
	EXPECT_EQ(status_of(p.original), "ok: ");
	EXPECT_EQ(sqlstate_of(original, "SELECT snowflake_nextval()"), "");
	p.original.stop(); // gone for good
	EXPECT_EQ(query_int(copy, "SELECT snowflake_release_claim('" + sid + ":1')"), 1);
	ASSERT_TRUE(a_whole_pass(*p.copy)) << p.copy->log();
	EXPECT_EQ(status_of(*p.copy), "ok: ");
	EXPECT_EQ(sqlstate_of(copy, "SELECT snowflake_nextval()"), "");
}

// The claims of identities a clone took (a system identifier below 2^32) in server's table, each as
// "system_identifier:timeline:node", "" when none.
std::string taken_identity(const Server &server) {
	return text_of(server, "SELECT coalesce(string_agg(system_identifier || ':' || timeline || ':' || node, ','), '') "
	                       "FROM snowflake_node_check.claims WHERE system_identifier::numeric < 4294967296");
}

// Two clones on one timeline (a cleanly stopped server's data directory copied whole, both started): the
// clone that receives the other's claims finds their shared claim written by the other (case c), and
// takes an identity of its own (0.5.0: both stayed 'ok'; until this change it refused under the shared
// identity, which no node of its own could part). It then claims node 3 after the claim they shared and
// refuses as the later server; the other, which does not see its writes, keeps issuing. Its HINT,
// followed both ways: a node of its own lets it issue; back on node 3, the release of the shared claim
// once the other is stopped for good does. The identity outlives a restart; a file that cannot be
// written fails the pass, which keeps refusing.
TEST(NodeCopies, ACloneTakesAnIdentityOfItsOwnAndRefusesAsTheLaterServer) {
	Server a("copies_clone_a", kLinkable);
	start_publishing(a);
	a.stop();
	Server b("copies_clone_b", Server::CloneOf{a});
	ASSERT_TRUE(a.start()) << a.log();
	ASSERT_TRUE(b.start()) << b.log();
	ASSERT_TRUE(a_whole_pass(a)) << a.log();
	ASSERT_TRUE(a_whole_pass(b)) << b.log(); // each has read the claim as its own
	EXPECT_EQ(status_of(b), "ok: ");
	subscribe(b, a, "from_a");
	// First the file cannot be written (a directory in its way, as a full or read-only disk would): the
	// pass fails and b refuses until one writes it.
	const std::string aside = b.data_file("snowflake.identity.new");
	ASSERT_EQ(mkdir(aside.c_str(), 0700), 0);
	pqxx::connection conn_a = a.connect();
	EXPECT_EQ(sqlstate_of(conn_a, "SELECT snowflake_nextval()"), ""); // its next pass writes the claim again
	const std::string sid = system_identifier(a);
	ASSERT_TRUE(b.wait_for_log("snowflake: the node check failed: snowflake: this server is a clone of " + sid +
	                           ":1 and could not take an identity of its own: could not write "
	                           "\"snowflake.identity.new\": Is a directory",
	                           20s))
	    << b.log();
	{
		pqxx::connection conn_b = b.connect();
		EXPECT_EQ(sqlstate_of(conn_b, "SELECT snowflake_nextval()"), "SN001");
	}
	ASSERT_EQ(rmdir(aside.c_str()), 0);
	ASSERT_TRUE(refuses(b)) << status_of(b) << b.log();
	ASSERT_TRUE(b.wait_for_log("snowflake: another server wrote this server's claim (" + sid + ":1): it is a copy of "
	                           "this server's data directory; this server takes an identity of its own, ",
	                           5s))
	    << b.log();
	const std::string taken = taken_identity(b);
	ASSERT_EQ(occurrences(taken, ":1:3"), 1) << taken; // one identity of its own, on timeline 1, node 3
	{
		pqxx::connection conn_b = b.connect();
		EXPECT_EQ(sqlstate_of(conn_b, "SELECT snowflake_nextval()"), "SN001");
	}
	EXPECT_NE(status_of(b).find("(" + sid + ":1), since "), std::string::npos) << status_of(b);
	const std::string hint = "This server is a clone of that one (a copy of its data directory) and has taken an "
	                         "identity of its own: give it a node of its own and reload the configuration. If no "
	                         "server holds " + sid + ":1 any more (the other copy was stopped for good, or took an "
	                         "identity of its own too), release it here: SELECT snowflake_release_claim('" + sid +
	                         ":1') in database \"postgres\"";
	ASSERT_NE(b.log().find(hint), std::string::npos) << b.log();
	EXPECT_EQ(status_of(a), "ok: ");
	EXPECT_EQ(sqlstate_of(conn_a, "SELECT snowflake_nextval()"), "");
	// A node of its own, as the HINT says.
	EXPECT_TRUE(moved_and_issuing(b, 5)) << status_of(b) << b.log();
	// The identity is on record: a restart keeps it, and takes no other.
	b.stop();
	ASSERT_TRUE(b.start()) << b.log();
	ASSERT_TRUE(a_whole_pass(b)) << b.log();
	EXPECT_EQ(status_of(b), "ok: ");
	EXPECT_EQ(text_of(b, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "5");
	ASSERT_TRUE(a_whole_pass(b)) << b.log();
	EXPECT_EQ(taken_identity(b), taken.substr(0, taken.size() - 1) + "5") << b.log();
	// Back on node 3, it is the later server again; the other stopped for good, its claim released.
	b.append_conf("snowflake.node = 3");
	b.reload();
	ASSERT_TRUE(refuses(b)) << status_of(b) << b.log();
	a.stop(); // stopped for good
	pqxx::connection conn_b = b.connect();
	EXPECT_EQ(query_int(conn_b, "SELECT snowflake_release_claim('" + sid + ":1')"), 1);
	ASSERT_TRUE(a_whole_pass(b)) << b.log();
	EXPECT_EQ(status_of(b), "ok: ");
	EXPECT_EQ(sqlstate_of(conn_b, "SELECT snowflake_nextval()"), "");
	EXPECT_EQ(occurrences(b.log(), "this server takes an identity of its own"), 1) << b.log();
}

// Two clones that each receive the other's claims: one, or both, take an identity of their own, and
// from the first refusal on they never both issue on node 3. Their HINTs, followed: the one that refuses
// moves to a node of its own; if the other still refuses (both took an identity, and no server holds
// the one they shared), it releases that claim.
TEST(NodeCopies, TwoClonesThatSeeEachOtherNeverBothIssue) {
	Server a("copies_twins_a", kLinkable);
	start_publishing(a);
	a.stop();
	Server b("copies_twins_b", Server::CloneOf{a});
	ASSERT_TRUE(a.start()) << a.log();
	ASSERT_TRUE(b.start()) << b.log();
	subscribe(b, a, "from_a");
	subscribe(a, b, "from_b");
	pqxx::connection conn_a = a.connect(), conn_b = b.connect();
	const std::string next = "SELECT snowflake_nextval()";
	EXPECT_EQ(sqlstate_of(conn_a, next), "");
	EXPECT_EQ(sqlstate_of(conn_b, next), "");
	const auto refusing = [](const Server &s) { return status_of(s).rfind("node conflict: refusing: ", 0) == 0; };
	ASSERT_TRUE(wait_until([&] { return refusing(a) || refusing(b); }, 20s)) << a.log() << b.log();
	for (int pass = 0; pass < 3; ++pass) {
		const bool issued_a = sqlstate_of(conn_a, next).empty(), issued_b = sqlstate_of(conn_b, next).empty();
		EXPECT_FALSE(issued_a && issued_b) << status_of(a) << " / " << status_of(b);
		ASSERT_TRUE(a_whole_pass(a) && a_whole_pass(b)) << a.log() << b.log();
	}
	Server &later = refusing(b) ? b : a, &other = refusing(b) ? a : b;
	const std::string sid = system_identifier(a);
	ASSERT_NE(later.log().find("release it here: SELECT snowflake_release_claim('" + sid + ":1')"), std::string::npos)
	    << later.log();
	EXPECT_TRUE(moved_and_issuing(later, 5)) << status_of(later) << later.log();
	if (refusing(other)) {
		pqxx::connection conn = other.connect();
		EXPECT_EQ(query_int(conn, "SELECT snowflake_release_claim('" + sid + ":1')"), 1);
	}
	ASSERT_TRUE(a_whole_pass(other)) << other.log();
	EXPECT_EQ(status_of(other), "ok: ");
	EXPECT_EQ(text_of(other, "SELECT (snowflake_parse(snowflake_nextval())).node::text"), "3");
}

// A server takes an identity of its own once. Its claim written by another (here by hand, as another
// copy or a publisher's forgery would) makes it take one and refuse as the later server; once the
// claim it left is released it issues. Its new identity's claim written by another then makes it
// refuse as any copy, with no second identity taken, until, as the HINT says, the other is stopped
// (here: there is none) and their claim released.
TEST(NodeCopies, AnIdentityIsTakenOnceThenACopyOfItIsRefused) {
	Server s("copies_once", kLinkable);
	start_publishing(s);
	ASSERT_TRUE(a_whole_pass(s)) << s.log(); // its own write is known
	const std::string sid = system_identifier(s);
	pqxx::connection conn = s.connect();
	const std::string another_writes = "UPDATE snowflake_node_check.claims SET heartbeat = heartbeat - "
	                                   "interval '1 second' WHERE system_identifier = ";
	exec(conn, {another_writes + "'" + sid + "'"});
	ASSERT_TRUE(refuses(s)) << status_of(s) << s.log();
	ASSERT_TRUE(s.wait_for_log("this server takes an identity of its own, ", 5s)) << s.log();
	EXPECT_EQ(query_int(conn, "SELECT snowflake_release_claim('" + sid + ":1')"), 1);
	ASSERT_TRUE(a_whole_pass(s)) << s.log();
	EXPECT_EQ(status_of(s), "ok: ");
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "");
	ASSERT_TRUE(a_whole_pass(s)) << s.log(); // its write under the identity it took is known
	const std::string taken = text_of(s, "SELECT system_identifier FROM snowflake_node_check.claims");
	exec(conn, {another_writes + "'" + taken + "'"});
	ASSERT_TRUE(refuses(s)) << status_of(s) << s.log();
	EXPECT_NE(status_of(s).find("(" + taken + ":1), a copy of this server on its timeline"), std::string::npos)
	    << status_of(s);
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "SN001");
	const std::string hint = "This server takes an identity of its own only once. Stop the other copy for good, or "
	                         "make it a cluster of its own (initdb, its data restored from a dump); then release "
	                         "their claim here: SELECT snowflake_release_claim('" + taken + ":1') in database "
	                         "\"postgres\"";
	ASSERT_NE(s.log().find(hint), std::string::npos) << s.log();
	EXPECT_EQ(occurrences(s.log(), "this server takes an identity of its own"), 1) << s.log();
	EXPECT_EQ(query_int(conn, "SELECT snowflake_release_claim('" + taken + ":1')"), 1);
	ASSERT_TRUE(a_whole_pass(s)) << s.log();
	EXPECT_EQ(status_of(s), "ok: ");
	EXPECT_EQ(sqlstate_of(conn, "SELECT snowflake_nextval()"), "");
	EXPECT_EQ(text_of(s, "SELECT system_identifier FROM snowflake_node_check.claims"), taken);
}

// An identity file the server cannot trust (damaged, or another cluster's, copied in by hand) is
// reported and ignored: the server claims its node under its cluster's identity.
TEST(NodeCopies, AnIdentityFileItCannotTrustIsReportedAndIgnored) {
	Server s("copies_bad_identity", kLinkable);
	ASSERT_TRUE(s.start()) << s.log();
	create_and_issue(s, 1);
	const std::string sid = system_identifier(s);
	const std::string file = s.data_file("snowflake.identity");
	struct Case {
		std::string text, logged;
	};
	for (const Case &c : {Case{"snowflake identity 1\ncluster " + sid + "\nsystem_identifier x\n",
	                           "snowflake: \"snowflake.identity\" is damaged; the node check goes by the cluster's "
	                           "identity"},
	                      Case{"snowflake identity 1\ncluster 42\nsystem_identifier 77\ncopy_of 42:1\n",
	                           "snowflake: \"snowflake.identity\" belongs to another cluster (system identifier 42); "
	                           "the node check goes by this cluster's identity"}}) {
		s.stop();
		{
			std::ofstream out(file, std::ios::trunc);
			out << c.text;
		}
		ASSERT_TRUE(s.start()) << s.log();
		ASSERT_TRUE(s.wait_for_log(c.logged, 10s)) << s.log();
		ASSERT_TRUE(a_whole_pass(s)) << s.log();
		EXPECT_EQ(status_of(s), "ok: ");
		EXPECT_EQ(text_of(s, "SELECT string_agg(system_identifier || ':' || node, ',') FROM snowflake_node_check.claims"),
		          sid + ":3");
	}
}

} // namespace
} // namespace snowflake::test
