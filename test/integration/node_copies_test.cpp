// Integration tests of the node check's copies (issue 34, item 7): a copy of
// a server has its system identifier, and its claims reach the original (or
// the original's reach it) through a logical-replication subscription to the
// claims. 0.5.0 counted the original's live claim as the promoted copy's own
// past, and two clones on one timeline both stayed 'ok'. Now the old primary
// refuses once it sees its promoted copy's claim on a later timeline; the
// promoted copy refuses once its original writes its claim again; a clone
// refuses once its own claim is written by the other. Each test then follows
// the refusal's HINT: a node of its own, or the release of a claim whose
// server is gone for good.
#include "server.hpp"

#include <gtest/gtest.h>

#include <memory>

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

// Two clones on one timeline (a cleanly stopped server's data directory copied whole, both started): the
// clone that receives the other's claims refuses once the other writes their shared claim (case c); the
// other, which does not see its writes, keeps issuing. As the HINT says (a node of its own would not part
// them: they share one claim), the other is stopped for good and their claim released, and the refusing
// clone issues again.
TEST(NodeCopies, ACloneRefusesOnceTheOtherWritesTheirClaim) {
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
	pqxx::connection conn_a = a.connect();
	EXPECT_EQ(sqlstate_of(conn_a, "SELECT snowflake_nextval()"), ""); // its next pass writes the claim again
	ASSERT_TRUE(refuses(b)) << status_of(b) << b.log();
	pqxx::connection conn_b = b.connect();
	EXPECT_EQ(sqlstate_of(conn_b, "SELECT snowflake_nextval()"), "SN001");
	const std::string sid = system_identifier(a);
	EXPECT_NE(status_of(b).find("(" + sid + ":1), a copy of this server on its timeline"), std::string::npos)
	    << status_of(b);
	EXPECT_EQ(status_of(a), "ok: ");
	EXPECT_EQ(sqlstate_of(conn_a, "SELECT snowflake_nextval()"), "");
	const std::string hint = "a node of its own does not part them: stop one of them for good, or make it a cluster "
	                         "of its own (initdb, its data restored from a dump). Then release their claim here: "
	                         "SELECT snowflake_release_claim('" + sid + ":1') in database \"postgres\"";
	ASSERT_NE(b.log().find(hint), std::string::npos) << b.log();
	a.stop(); // stopped for good
	EXPECT_EQ(query_int(conn_b, "SELECT snowflake_release_claim('" + sid + ":1')"), 1);
	ASSERT_TRUE(a_whole_pass(b)) << b.log();
	EXPECT_EQ(status_of(b), "ok: ");
	EXPECT_EQ(sqlstate_of(conn_b, "SELECT snowflake_nextval()"), "");
}

} // namespace
} // namespace snowflake::test
