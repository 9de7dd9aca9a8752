// The node check's words: its status as snowflake_node_status() reports it
// (node_check_text(), declared in claims.hpp), and its log lines
// (claims_log.hpp): one at each change of its status, with the HINT that says
// what to do about it.
#include "claims_log.hpp"

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

void log_change(NodeCheck was, NodeCheck now, const char *report, int32_t node, const char *identity, bool clone) {
	if (now == was)
		return;
	if (now == NodeCheck::Refusing && clone)
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

} // namespace snowflake
