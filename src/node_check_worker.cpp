// The node check worker's start, connection and exit (see
// node_check_worker.hpp): the renewer's registration of the worker as the
// interval says, the exit callback that reports an attempt that never
// connected, and the backend's side of a database command that needs the
// worker gone.
#include "node_check_worker.hpp"

#include "claims.hpp"

#include <signal.h>

namespace snowflake {
namespace {

// The database commands that need snowflake.database to themselves, as check_leave_for stores them.
enum class DatabaseCommand : uint32_t { None, Drop, Rename, Template };

// Whether this worker process has connected to its database.
bool connected = false;

// In the renewer: the handle of the node check worker it registered, until it sees that worker gone.
BackgroundWorkerHandle *registered = nullptr;

// The words for a database command, as the report and the log name it.
const char *command_text(DatabaseCommand command) noexcept {
	switch (command) {
	case DatabaseCommand::Drop:
		return "DROP DATABASE";
	case DatabaseCommand::Rename:
		return "ALTER DATABASE ... RENAME";
	case DatabaseCommand::Template:
		return "CREATE DATABASE ... TEMPLATE";
	case DatabaseCommand::None:
		break;
	}
	return "";
}

extern "C" {
// before_shmem_exit callback of the worker: clears its PID and, when a database command asked it to
// leave or its connection failed (it exits before connecting, not terminated), publishes 'cannot
// connect' and wakes the waiting calls; then hands the report and the next registration to the renewer
// (`check_registered`, `check_retry_at_us`). Runs while the PGPROC still exists; raises nothing (a
// WARNING line at most).
static void node_check_exit(int code, Datum) {
	SharedState &state = *shared_state;
	pg_atomic_write_u32(&state.check_pid, 0);
	const auto command = static_cast<DatabaseCommand>(pg_atomic_exchange_u32(&state.check_leave_for, 0));
	char report[192];
	if (command != DatabaseCommand::None) {
		snprintf(report, sizeof(report), "left database \"%s\" for %s", check_database, command_text(command));
		publish_node_check(state, NodeCheck::CannotConnect, report, true);
	} else if (!connected && !ProcDiePending) { // the connection failed (not a shutdown while connecting)
		snprintf(report, sizeof(report), "could not connect to database \"%s\"", check_database);
		publish_node_check(state, NodeCheck::CannotConnect, report, true);
		if (pg_atomic_add_fetch_u32(&state.check_failed_connects, 1) == 1) // the first in a row
			ereport(WARNING, (errmsg("snowflake: the node check could not connect to database \"%s\" "
			                         "(snowflake.database); this server claims its node nowhere and sees no "
			                         "other server's claim",
			                         check_database),
			                  errhint("Set snowflake.database to the database where you created the extension "
			                          "and restart the server. The worker tries again every 10 s.")));
	}
	// Its last word is written: the renewer may write the report, and register the next worker, from now
	// (at once after an exit for the interval 0, code 0; else 10 s later, as when it could not connect).
	pg_atomic_write_u64(&state.check_retry_at_us,
	                    static_cast<uint64>(monotonic_us() + (code == 0 ? 0 : kNodeCheckRetryMs * 1000)));
	pg_write_barrier();
	pg_atomic_write_u32(&state.check_registered, 0);
}
} // extern "C"

// The database command statement runs on snowflake.database, if any: DROP, RENAME or a TEMPLATE.
DatabaseCommand command_on_check_database(const Node *statement) {
	Node *node = const_cast<Node *>(statement);
	if (IsA(node, DropdbStmt) && strcmp(castNode(DropdbStmt, node)->dbname, check_database) == 0)
		return DatabaseCommand::Drop;
	if (IsA(node, RenameStmt) && castNode(RenameStmt, node)->renameType == OBJECT_DATABASE &&
	    strcmp(castNode(RenameStmt, node)->subname, check_database) == 0)
		return DatabaseCommand::Rename;
	if (IsA(node, CreatedbStmt)) {
		ListCell *cell;
		foreach (cell, castNode(CreatedbStmt, node)->options) {
			DefElem *option = lfirst_node(DefElem, cell);
			if (strcmp(option->defname, "template") == 0 && option->arg != nullptr &&
			    strcmp(defGetString(option), check_database) == 0)
				return DatabaseCommand::Template;
		}
	}
	return DatabaseCommand::None;
}

// Whether command could run at all, as far as the worker's leaving matters: DROP and CREATE only at
// the top level outside a transaction block, and every one only by the database's owner (or a
// superuser; RENAME and CREATE also need CREATEDB). Anyone else's attempt fails anyway, and must not stop the
// check.
bool may_run(DatabaseCommand command, bool top_level) {
	if (command != DatabaseCommand::Rename && (!top_level || IsTransactionBlock()))
		return false;
	if (command != DatabaseCommand::Drop && !have_createdb_privilege())
		return false;
	const Oid database = get_database_oid(check_database, true);
	return OidIsValid(database) && snowflake_database_ownercheck(database, GetUserId());
}

} // namespace

void keep_node_check(SharedState &state) {
	if (registered != nullptr) {
		pid_t pid;
		if (GetBackgroundWorkerPid(registered, &pid) != BGWH_STOPPED)
			return; // registered, starting or running: it exits by itself when the interval is 0
		pfree(registered);
		registered = nullptr;
		pg_atomic_write_u32(&state.check_registered, 0); // gone, also one that never started (no exit callback)
	}
	if (pg_atomic_read_u32(&state.check_registered) != 0)
		return; // registered by the renewer before this one: the worker's exit clears the flag
	pg_read_barrier(); // after its exit callback's last word
	if (node_check_interval_s == 0) {
		if (static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status)) != NodeCheck::Off)
			publish_not_checking(state, NodeCheck::Off);
		return;
	}
	if (monotonic_us() < static_cast<int64_t>(pg_atomic_read_u64(&state.check_retry_at_us)))
		return;
	BackgroundWorker worker = library_worker("snowflake node check", "snowflake_node_check_main", BGW_NEVER_RESTART);
	worker.bgw_notify_pid = MyProcPid; // wakes this process when the worker starts and when it is gone
	pg_atomic_write_u32(&state.check_registered, 1);
	const MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext); // the handle outlives the round
	const bool started = RegisterDynamicBackgroundWorker(&worker, &registered);
	MemoryContextSwitchTo(caller);
	if (started)
		return;
	registered = nullptr;
	publish_not_checking(state, NodeCheck::NoWorkerSlot); // every slot taken: the one reason it returns false
	pg_atomic_write_u32(&state.check_registered, 0);
}

void begin_node_check_connection(SharedState &state) {
	connected = false;
	pg_atomic_write_u32(&state.check_leave_for, 0); // a request left by a command whose worker had gone
	before_shmem_exit(node_check_exit, 0);
	pg_atomic_write_u32(&state.check_pid, static_cast<uint32>(MyProcPid));
}

void node_check_connected(SharedState &state) noexcept {
	connected = true;
	pg_atomic_write_u32(&state.check_failed_connects, 0);
}

void leave_for_database_command(const Node *statement, bool top_level) {
	if (shared_state == nullptr || check_database == nullptr)
		return;
	const DatabaseCommand command = command_on_check_database(statement);
	if (command == DatabaseCommand::None || !may_run(command, top_level))
		return; // not the check's database, or a command that fails anyway
	const pid_t pid = static_cast<pid_t>(pg_atomic_read_u32(&shared_state->check_pid));
	if (pid == 0 || BackendPidGetProc(pid) == nullptr)
		return; // no worker in the process array to wait for
	pg_atomic_write_u32(&shared_state->check_leave_for, static_cast<uint32>(command));
	ereport(LOG, (errmsg("snowflake: the node check leaves database \"%s\" for %s", check_database,
	                     command_text(command))));
	if (kill(pid, SIGTERM) != 0)
		return;
	for (int waited_ms = 0; waited_ms < kLeaveWaitMs && BackendPidGetProc(pid) != nullptr; waited_ms += 10) {
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10, wait_event(WaitFor::NodeCheck));
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

} // namespace snowflake
