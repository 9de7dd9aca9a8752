// The node check worker's life around its passes (claims.hpp has the passes):
// its connection to snowflake.database, and getting out of the way of the
// database commands that need that database to themselves.
//
// - Connecting: the worker stores its PID (`check_pid`) and registers an exit
//   callback before it connects. BackgroundWorkerInitializeConnection ends
//   the process with FATAL when the database does not exist (misspelt,
//   dropped, renamed); the callback then publishes 'cannot connect' at once,
//   so no call waits for a first pass that cannot come, and the first such
//   exit in a row (`check_failed_connects`) logs a WARNING. The postmaster
//   starts the worker again 10 s later (bgw_restart_time); a connection that
//   succeeds resets the count.
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

// In the worker, before it connects: records its PID and the exit callback that reports an attempt
// that never connected (and any other exit) in shared memory.
void begin_node_check_connection(SharedState &state);

// In the worker, once connected: the attempts in a row that failed are over.
void node_check_connected(SharedState &state) noexcept;

// Before a utility statement runs (top_level: not inside a function): when it is a DROP, RENAME or
// TEMPLATE use of snowflake.database that its role may run (the database's owner) and the node
// check's worker is connected there, ends the worker and waits (bounded) until it has left, so that
// the command does not fail with 55006. Another role's attempt leaves the worker alone.
void leave_for_database_command(const Node *statement, bool top_level);

} // namespace snowflake
