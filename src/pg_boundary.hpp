// The boundary between snowflake's C++ and PostgreSQL's C. Every glue file
// includes PostgreSQL through this header and nothing else: the server headers
// sit inside extern "C", after the C++ headers, followed by the version shims.
// It also declares what the glue files share: the settings (owned by
// snowflake.cpp), the system clock, and the description of a background
// worker of this library.
//
// Exceptions: nothing on our side throws. The core is noexcept integer code
// (checked below), the glue calls no throwing library code, and no C++ object
// with a destructor is alive where an ereport() could longjmp, so no
// try/catch is needed at the entry points. Keep it that way: code that can
// throw must catch, copy the message, and ereport only after the catch block.
#pragma once

#include "generator.hpp"
#include "node_source.hpp"

#include <ctime>
#include <utility>

extern "C" {
#include "postgres.h"

#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlog_internal.h" // RegisterCustomRmgr (wal.hpp)
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "catalog/pg_control.h"
#include "catalog/pg_database.h" // get_database_oid() on PostgreSQL 19
#include "catalog/pg_database_d.h"
#include "catalog/pg_opfamily_d.h"
#include "catalog/pg_type_d.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "commands/dbcommands.h" // get_database_oid() up to PostgreSQL 18
#include "common/file_perm.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "port/atomics.h"
#include "port/pg_crc32c.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "postmaster/postmaster.h"
#include "storage/condition_variable.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "tcop/utility.h"
#include "utils/backend_status.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/lsyscache.h"
#include "utils/rangetypes.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"
#include "utils/wait_event.h"
}

#include "pg_compat.hpp"

static_assert(noexcept(std::declval<snowflake::GeneratorState &>().next(0, 0, snowflake::Policy{}, 1)),
              "the core must not throw across the PostgreSQL boundary");

namespace snowflake {

// What the server that took a node later does when the node check finds the node taken.
enum class NodeConflictPolicy : int { Refuse, Warn };

// Settings, defined and validated in settings.cpp.
extern int node_setting;             // snowflake.node, -1 when unset
extern NodeSourceKind node_source_kind; // snowflake.node_source, parsed
extern char node_source_variable[65];   // snowflake.node_source 'env:NAME': NAME
extern int node_offset_setting;      // snowflake.node_offset
extern char *check_database;         // snowflake.database: where the node check connects
extern int node_check_interval_s;    // snowflake.node_check_interval, 0: off
extern int node_conflict_setting;    // snowflake.node_conflict, a NodeConflictPolicy value
extern int max_clock_drift_ms;       // snowflake.max_clock_drift
extern int clock_policy_setting;     // snowflake.clock_policy, a ClockPolicy value
extern int64_t epoch_ms;             // snowflake.epoch, parsed
extern bool fault_injection_enabled; // snowflake.fault_injection
extern int backfill_node_setting;    // snowflake.backfill_node, -1 when unset
extern LayoutSpec layout_setting;    // snowflake.layout, parsed; its epoch is the preset's, not epoch_ms

// The policy the settings describe right now.
inline Policy current_policy() noexcept {
	return Policy{epoch_ms, max_clock_drift_ms, static_cast<ClockPolicy>(clock_policy_setting), backfill_node_setting,
	              layout_setting.layout};
}

// The wall clock in Unix microseconds.
inline int64_t unix_now_us() noexcept {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

// The wall clock in Unix milliseconds: the time the server injects into the core.
inline int64_t unix_now_ms() noexcept {
	return unix_now_us() / 1000;
}

// PostgreSQL's epoch, 2000-01-01 UTC, in Unix microseconds: a timestamptz plus this is Unix time.
constexpr int64_t kPostgresEpochUnixUs = int64_t{POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE} * SECS_PER_DAY * 1000000;

// The timestamptz of a Unix millisecond.
inline TimestampTz unix_ms_to_timestamptz(int64_t unix_ms) noexcept {
	return unix_ms * 1000 - kPostgresEpochUnixUs;
}

// The text of column col of row r of the last SPI result ("" when NULL).
inline const char *spi_text(int r, int col) {
	const char *value = SPI_getvalue(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, col);
	return value != nullptr ? value : "";
}

// A background worker of this library: its name (also its type), its entry point, and how many seconds
// after an exit the postmaster starts it again. It starts once recovery is over (a standby issues no
// IDs, and claims no node) and may connect to a database.
inline BackgroundWorker library_worker(const char *name, const char *function, int restart_s) noexcept {
	BackgroundWorker worker;
	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = restart_s;
	snprintf(worker.bgw_library_name, sizeof(worker.bgw_library_name), "snowflake");
	snprintf(worker.bgw_function_name, sizeof(worker.bgw_function_name), "%s", function);
	snprintf(worker.bgw_name, sizeof(worker.bgw_name), "%s", name);
	snprintf(worker.bgw_type, sizeof(worker.bgw_type), "%s", name);
	return worker;
}

} // namespace snowflake
