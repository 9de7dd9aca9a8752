// The node check's words: its status as snowflake_node_status() reports it
// (node_check_text(), declared in claims.hpp), and its log lines
// (claims_log.hpp): one at each change of its status, with the HINT that says
// what to do about it, and one for each invalid claim.
#include "claims_log.hpp"

#include <algorithm>

namespace snowflake {

const char *node_check_text(NodeCheck check) noexcept {
	switch (check) {
	case NodeCheck::Off:
		return "off";
	case NodeCheck::Starting:
		return "starting";
	case NodeCheck::NoExtension:
		return "no extension";
	case NodeCheck::Failing:
		return "failing";
	case NodeCheck::Standby:
		return "standby";
	case NodeCheck::Ok:
		return "ok";
	case NodeCheck::Refusing:
		return "node conflict: refusing";
	case NodeCheck::Warning:
		return "node conflict";
	case NodeCheck::Incomplete:
		return "incomplete";
	case NodeCheck::OthersShare:
		return "node conflict between others";
	case NodeCheck::CannotConnect:
		return "cannot connect";
	case NodeCheck::NoWorkerSlot:
		return "no worker slot";
	case NodeCheck::Stale:
		return "stale";
	}
	return "unknown";
}

void log_change(NodeCheck was, NodeCheck now, const char *report, int32_t node, const char *identity, Clone clone) {
	if (now == was)
		return;
	if (now == NodeCheck::Refusing && clone == Clone::Shared)
		ereport(WARNING, (errmsg("snowflake: node %d is claimed by %s: this server refuses IDs", node, report),
		                  errdetail("Another server writes the identity this server took when it was found a clone: "
		                            "another copy of its data directory runs, or a publisher wrote its claim."),
		                  errhint("This server takes an identity of its own only once. Stop the other copy for "
		                          "good, or make it a cluster of its own (initdb, its data restored from a dump); "
		                          "then release their claim here: SELECT snowflake_release_claim('%s') in database "
		                          "\"%s\". Silence never lifts the refusal.",
		                          identity, check_database)));
	else if (now == NodeCheck::Refusing && clone == Clone::Left)
		ereport(WARNING, (errmsg("snowflake: node %d is claimed by %s, which took it first: this server refuses IDs",
		                         node, report),
		                  errhint("This server is a clone of that one (a copy of its data directory) and has taken an "
		                          "identity of its own: give it a node of its own and reload the configuration. If no "
		                          "server holds %s any more (the other copy was stopped for good, or took an identity "
		                          "of its own too), release it here: SELECT snowflake_release_claim('%s') in database "
		                          "\"%s\". Either lifts the refusal within snowflake.node_check_interval; silence "
		                          "never does.",
		                          identity, identity, check_database)));
	else if (now == NodeCheck::Refusing)
		ereport(WARNING, (errmsg("snowflake: node %d is claimed by %s, which took it first: this server refuses IDs",
		                         node, report),
		                  identity[0] != '\0'
		                      ? errhint("Give this server a node of its own and reload the configuration. If that server "
		                                "is gone for good, release its claim here: SELECT snowflake_release_claim('%s') "
		                                "in database \"%s\". Either lifts the refusal within "
		                                "snowflake.node_check_interval; silence never does.",
		                                identity, check_database)
		                      : errhint("Give this server a node of its own and reload the configuration.")));
	else if (now == NodeCheck::Warning)
		ereport(WARNING, (errmsg("snowflake: node %d is also claimed by %s; two servers on one node can issue the same "
		                         "IDs",
		                         node, report),
		                  errhint("Give one of them a node of its own and reload its configuration.")));
	else if (now == NodeCheck::Failing)
		ereport(WARNING, (errmsg("snowflake: the node check failed: %s", report),
		                  errdetail("Until a pass succeeds, this server claims its node nowhere and sees no other "
		                            "server's claim.")));
	else if (now == NodeCheck::NoExtension)
		ereport(WARNING, (errmsg("snowflake: the node check is not checking: %s (snowflake.database)", report),
		                  errdetail("Without the extension there, this server claims its node nowhere and sees no "
		                            "other server's claim."),
		                  errhint("Run CREATE EXTENSION snowflake in database \"%s\", or set snowflake.database to "
		                          "the database where you created the extension and restart the server.",
		                          check_database)));
	else if (now == NodeCheck::OthersShare)
		ereport(WARNING, (errmsg("snowflake: two other servers claim one node, %s; their IDs can repeat wherever "
		                         "their rows meet, as here",
		                         report),
		                  errhint("Give one of them a node of its own and reload its configuration; this server "
		                          "keeps issuing under its own node.")));
	else if (now == NodeCheck::Incomplete && identity[0] != '\0') // a subscription that cannot bring claims
		ereport(WARNING, (errmsg("snowflake: the node check %s, so it cannot tell whether its publisher's servers "
		                         "share this server's node",
		                         report),
		                  errhint("%s", identity)));
	else if (now == NodeCheck::Incomplete)
		ereport(LOG, (errmsg("snowflake: the node check %s, so it cannot tell whether they share this server's "
		                     "node",
		                     report)));
	else if (was == NodeCheck::Refusing || was == NodeCheck::Warning)
		ereport(LOG, (errmsg("snowflake: no other server claims this server's node any more")));
	else if (now == NodeCheck::Ok && node >= 0)
		ereport(LOG, (errmsg("snowflake: the node check in database \"%s\" is ok: no other server claims node %d",
		                     check_database, node)));
	else if (now == NodeCheck::Ok)
		ereport(LOG, (errmsg("snowflake: the node check in database \"%s\" is ok: this server has no node to claim",
		                     check_database)));
	else if (now == NodeCheck::NoWorkerSlot)
		ereport(WARNING,
		        (errmsg("snowflake: the node check cannot start: every background worker slot is taken "
		                "(max_worker_processes = %d)",
		                max_worker_processes),
		         errdetail("Until it starts, this server claims its node nowhere and sees no other server's claim."),
		         errhint("Raise max_worker_processes and restart the server, or stop another background worker; "
		                 "the reservation renewer tries again every second.")));
	else if (now == NodeCheck::Off)
		ereport(LOG, (errmsg("snowflake: the node check is off (snowflake.node_check_interval = 0)")));
}

namespace {

// Fingerprints of the invalid claims reported so far (claim_rules.hpp), so that each is reported once.
uint64_t reported[64];
uint32_t reported_count = 0;

} // namespace

bool believed(const ClaimText &claim, ClaimValues &values) {
	char why[96];
	if (check_claim(claim, layout_setting.layout.max_node(), unix_now_us(), values, why))
		return true;
	const uint64_t print = claim_fingerprint(claim, why);
	const uint32_t known = std::min<uint32_t>(reported_count, lengthof(reported));
	if (std::find(reported, reported + known, print) != reported + known)
		return false;
	reported[reported_count++ % lengthof(reported)] = print;
	char server[2 * kClaimServerMax], identity[2 * kClaimIdentityMax], node[32], started[48], heartbeat[48];
	escape_claim_text(claim.server, server, sizeof(server));
	escape_claim_text(claim.identity, identity, sizeof(identity));
	escape_claim_text(claim.node, node, sizeof(node));
	escape_claim_text(claim.started_us, started, sizeof(started));
	escape_claim_text(claim.heartbeat_us != nullptr ? claim.heartbeat_us : "(not seen here)", heartbeat,
	                  sizeof(heartbeat));
	ereport(WARNING, (errmsg("snowflake: the node check ignores an invalid claim: %s", why),
	                  errdetail("The claim: server \"%s\", identity %s, node %s, started_at %s, heartbeat %s "
	                            "(Unix microseconds).",
	                            server, identity, node, started, heartbeat),
	                  errhint("No server's node check writes such a claim: find who wrote it. Remove it with DELETE FROM "
	                          "snowflake_node_check.claims WHERE system_identifier || ':' || timeline = '...'; "
	                          "only the extension's owner can.")));
	return false;
}

} // namespace snowflake
