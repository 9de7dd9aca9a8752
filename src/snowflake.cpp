// The module's front door: the magic block and _PG_init, which defines the
// settings (settings.hpp) and, when preloading, arranges for the shared
// generator, its background worker and the hook that gives SET of a setting
// its hint. Without preloading, CREATE EXTENSION works, the decode functions
// work with the default epoch, and snowflake_nextval() refuses.
#include "reservation.hpp"
#include "restart.hpp"
#include "settings.hpp"

extern "C" {
SNOWFLAKE_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);
PGDLLEXPORT void snowflake_renewer_main(Datum);
}

namespace snowflake {
namespace {

ProcessUtility_hook_type prev_process_utility = nullptr;

extern "C" {
// ProcessUtility_hook: refuses SET of a snowflake setting with a hint, then chains.
static void snowflake_process_utility(PlannedStmt *pstmt, const char *query, bool read_only_tree,
                                      ProcessUtilityContext context, ParamListInfo params, QueryEnvironment *env,
                                      DestReceiver *dest, QueryCompletion *qc) {
	if (IsA(pstmt->utilityStmt, VariableSetStmt))
		refuse_session_change(*castNode(VariableSetStmt, pstmt->utilityStmt));
	if (prev_process_utility != nullptr)
		prev_process_utility(pstmt, query, read_only_tree, context, params, env, dest, qc);
	else
		standard_ProcessUtility(pstmt, query, read_only_tree, context, params, env, dest, qc);
}
} // extern "C"

// Registers the background worker that renews the durable reservation ahead of need (reservation.hpp),
// started once recovery is over (a standby issues no IDs) and again a second after it exits. It
// connects to no database, only to show in pg_stat_activity with its wait events.
void register_renewer() {
	BackgroundWorker worker;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = 1;
	snprintf(worker.bgw_library_name, sizeof(worker.bgw_library_name), "snowflake");
	snprintf(worker.bgw_function_name, sizeof(worker.bgw_function_name), "snowflake_renewer_main");
	snprintf(worker.bgw_name, sizeof(worker.bgw_name), "snowflake reservation renewer");
	snprintf(worker.bgw_type, sizeof(worker.bgw_type), "snowflake reservation renewer");
	RegisterBackgroundWorker(&worker);
}

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
	snowflake::install_shmem_hooks(snowflake::recover_reservation, snowflake::record_last_id_at_exit);
	snowflake::register_renewer();
	snowflake::install_utility_hook();
}

// The renewal worker's entry point: the usual signal handling, then the loop (reservation.cpp).
void snowflake_renewer_main(Datum) {
	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(nullptr, nullptr, 0); // no database: a row in pg_stat_activity
	snowflake::renew_reservations();
}
