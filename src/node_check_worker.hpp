// The node check worker's life around its passes (claims.hpp has the passes):
// who starts it and when, its connection to snowflake.database, and getting
// out of the way of the database commands that need that database to
// themselves.
//
// - Starting: the worker is a dynamic background worker, registered by the
//   reservation renewer (always running on a primary) at each of its rounds
//   (about a second apart, and at once on a reload) while
//   snowflake.node_check_interval is above 0 and none is registered
//   (`check_registered`). At 0 none is registered, and a running one exits
//   (claims.hpp), so the check holds no max_worker_processes slot; a reload
//   to a positive interval starts it without a restart. It is never
//   restarted by the postmaster (BGW_NEVER_RESTART): after any exit but one
//   for the interval 0 the renewer registers it again 10 s later
//   (`check_retry_at_us`), and a crash restart forgets it together with the
//   shared state, so there is never more than one. The renewer keeps the
//   worker's handle and notices it gone (also one that never started); a
//   registration that finds no free slot publishes 'no worker slot' with a
//   WARNING naming max_worker_processes, and is tried again every round.
// - Connecting: the worker stores its PID (`check_pid`) and registers an exit
//   callback before it connects. BackgroundWorkerInitializeConnection ends
//   the process with FATAL when the database does not exist (misspelt,
//   dropped, renamed); the callback then publishes 'cannot connect' at once,
//   so no call waits for a first pass that cannot come, and the first such
//   exit in a row (`check_failed_connects`) logs a WARNING. The renewer
//   starts the worker again 10 s later; a connection that succeeds resets the
//   count.
// - Leaving: DROP DATABASE, ALTER DATABASE ... RENAME and CREATE DATABASE ...
//   TEMPLATE refuse to run (55006) while any session is connected to the
//   database. The utility hook calls leave_for_database_command() first: when
//   the command names snowflake.database and the session's role owns it (no
//   one else can run it, and no one else may stop the check), it records why (`check_leave_for`),
//   ends the worker with SIGTERM and waits for it to leave the process array
//   (at most kLeaveWaitMs), as Citus's maintenance daemon is stopped before
//   DROP DATABASE. The worker's exit publishes 'cannot connect' with the
//   command, and it comes back after 10 s if the database is still there.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// How long a database command waits for the node check's worker to leave its database, at most.
constexpr int kLeaveWaitMs = 5000;

// How long after an exit of the node check's worker (but one for the interval 0) the renewer
// registers the next.
constexpr int64_t kNodeCheckRetryMs = 10000;

// In the reservation renewer, at each of its rounds: registers the node check's worker when the interval
// is above 0 and none is registered (and kNodeCheckRetryMs have passed since the last one's exit), or
// publishes 'no worker slot' when every slot is taken; with the interval at 0 and no worker, publishes
// 'off'.
void keep_node_check(SharedState &state);

// In the worker, before it connects: records its PID and the exit callback that reports an attempt
// that never connected (and any other exit) in shared memory, and lets the renewer register the next.
void begin_node_check_connection(SharedState &state);

// In the worker, once connected: the attempts in a row that failed are over.
void node_check_connected(SharedState &state) noexcept;

// Before a utility statement runs (top_level: not inside a function): when it is a DROP, RENAME or
// TEMPLATE use of snowflake.database that its role may run (the database's owner) and the node
// check's worker is connected there, ends the worker and waits (bounded) until it has left, so that
// the command does not fail with 55006. Another role's attempt leaves the worker alone.
void leave_for_database_command(const Node *statement, bool top_level);

} // namespace snowflake
