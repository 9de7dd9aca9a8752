// What snowflake_stats() and snowflake_state() report: a consistent copy of
// the generator and its counters, and whether a call could issue an ID now,
// worked out by the step it would take, taken on the copy.
#pragma once

#include "claims.hpp"
#include "node.hpp"

namespace snowflake {

// The words for r: "ok", "clock behind", ... (docs/functions.md lists them).
const char *state_text(Readiness r) noexcept;

// A consistent copy of the generator and its counters, and what a call would meet now.
struct Stats {
	int32_t node;
	Blocked blocked;
	int64_t recorded_epoch_ms; // the state file's epoch when blocked is LayoutChanged (else epoch_ms)
	GeneratorState generator;
	int64_t waits;   // times a call slept for the clock
	int64_t wait_ms; // total time slept
	int64_t clock_offset_ms;
	int64_t lead_ms;          // how far past the clock a reservation reaches now
	int64_t write_latency_us; // the estimate the lead is sized from
	int64_t renewals;         // reservations the worker made ahead of need
	int64_t caller_writes;    // reservations a caller had to make, having found the last one spent
	int64_t caller_waits;     // callers that waited for another process's reservation write
	Readiness state;          // whether a call could issue an ID now, and if not why (a dry-run step)
	int64_t state_since_us;   // since when, Unix µs: the first call or snapshot that saw it, or the write's
	int64_t behind_ms;        // ClockBehind: how far the clock lags
	bool behind_floor;        // ClockBehind: it lags the floor of this run, not the last ID
	StartFloor floor_from;    // ClockBehind behind the floor: where that floor came from
	int64_t resumes_unix_ms;  // ClockBehind: when IDs flow again by themselves, if the clock runs on (else -1)
	int32_t writer_pid;       // WriteStalled: the process writing
	int32_t write_errno;      // WriteFailing: why the last write failed; StateUnreadable: why the file was
	bool foreign_file;        // StateLost: the file in place was another cluster's
	ConfiguredNode configured; // what the node source gave, and why no node when it gave none
	NodeCheck check;           // what the node check found last ('stale' when its worker is overdue)
	bool check_conflict;       // whether its last pass found another server on this node (check_report names it)
	char check_report[192];    // the other server on this node, or the node check's error ("" when none)
	int64_t check_at_us;       // when the node check's last pass ended, Unix µs (0: none yet)
};

// What keeps snowflake_nextval() from issuing IDs, in a sentence for snowflake_state() (palloc'd or
// static); nullptr when nothing does. Each names the fact behind the state; docs/troubleshooting.md
// says what to do.
const char *state_detail(const Stats &snap);

// The generator's state and counters now, and whether a call could issue an ID (the step it would
// take, taken on a copy); ERROR when snowflake is not preloaded.
Stats read_stats();

} // namespace snowflake
