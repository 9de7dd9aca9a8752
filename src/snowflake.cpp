// The module's front door: the magic block and _PG_init, which defines the
// settings (settings.hpp) and, when preloading, arranges for the shared
// generator, its background worker and the hook that gives SET of a setting
// its hint. Without preloading, CREATE EXTENSION works, the decode functions
// work with the default epoch, and snowflake_nextval() refuses.
#include "claims.hpp"
#include "wal.hpp"
#include "node.hpp"
#include "node_check_worker.hpp"
#include "reservation.hpp"
#include "restart.hpp"
#include "settings.hpp"

extern "C" {
SNOWFLAKE_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);
PGDLLEXPORT void snowflake_renewer_main(Datum);
PGDLLEXPORT void snowflake_node_check_main(Datum);
}

namespace snowflake {
namespace {

ProcessUtility_hook_type prev_process_utility = nullptr;

// Fills a new shared state in, in the postmaster: the node the settings give (node.hpp), then what
// snowflake.state and pg_control say of the IDs issued before (restart.hpp).
void fill_in(SharedState &state) {
	publish_configured_node(state);
	recover_reservation(state);
}

extern "C" {
// ProcessUtility_hook: refuses SET of a snowflake setting with a hint, gets the node check's worker out
// of the way of a DROP, RENAME or TEMPLATE of its database, then chains.
static void snowflake_process_utility(PlannedStmt *pstmt, const char *query, bool read_only_tree,
                                      ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *env,
                                      DestReceiver *dest, QueryCompletion *qc) {
	if (IsA(pstmt->utilityStmt, VariableSetStmt))
		refuse_session_change(*castNode(VariableSetStmt, pstmt->utilityStmt));
	leave_for_database_command(pstmt->utilityStmt, context == PROCESS_UTILITY_TOPLEVEL);
	if (prev_process_utility != nullptr)
		prev_process_utility(pstmt, query, read_only_tree, context, params, env, dest, qc);
	else
		standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc);
}
} // extern "C"

// Installs the hook that gives SET of a snowflake setting its hint.
void install_utility_hook() {
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = snowflake_process_utility;
}

} // namespace
} // namespace snowflake

// Defines the settings; when preloading, also arranges for the shared generator and its worker.
void _PG_init(void) {
	snowflake::define_settings(process_shared_preload_libraries_in_progress);
	if (!process_shared_preload_libraries_in_progress)
		return;
	snowflake::install_shmem_hooks(snowflake::fill_in, snowflake::record_last_id_at_exit);
	snowflake::register_wal_rmgr(); // before the startup process replays any WAL
	// The reservation's renewal worker (reservation.hpp) connects to no database, only to show in
	// pg_stat_activity with its wait events. It registers the node check (claims.hpp), which connects
	// to snowflake.database, while snowflake.node_check_interval is above 0 (node_check_worker.hpp): a
	// check turned off takes no max_worker_processes slot. Neither runs while pg_upgrade drives the
	// server (binary-upgrade mode): nothing is issued then, and a session in a database would stop
	// pg_upgrade from dropping and restoring it.
	if (!IsBinaryUpgrade) {
		BackgroundWorker renewer =
		    snowflake::library_worker("snowflake reservation renewer", "snowflake_renewer_main", 1);
		RegisterBackgroundWorker(&renewer);
	}
	snowflake::install_utility_hook();
}

// The renewal worker's entry point: the usual signal handling, then the loop (reservation.cpp), which
// also keeps the node check's worker registered as its interval says (node_check_worker.cpp).
void snowflake_renewer_main(Datum) {
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(nullptr, nullptr, 0); // no database: a row in pg_stat_activity
	snowflake::renew_reservations(snowflake::keep_node_check);
}

// The node check's entry point (a dynamic worker the renewal worker registers): the usual signal
// handling, a connection to snowflake.database whose failure is reported (node_check_worker.cpp), then
// its loop (claims.cpp).
void snowflake_node_check_main(Datum) {
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	snowflake::begin_node_check_connection(snowflake::preloaded()); // an attempt that fails says so
	BackgroundWorkerInitializeConnection(snowflake::check_database, nullptr, 0);
	snowflake::node_check_connected(snowflake::preloaded());
	snowflake::check_nodes();
}
