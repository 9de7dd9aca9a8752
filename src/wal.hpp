// The reservation in the WAL: every reservation a primary makes is also a
// record of snowflake's own resource manager (PostgreSQL 15's custom WAL
// resource managers), flushed before any ID it covers is issued. The WAL
// carries it, in order, wherever the data goes: crash recovery replays it, every
// standby replays it as it streams, and a promoted standby, a recovered primary
// or a point-in-time restore starts above the last reservation that reached its
// WAL, whatever its clock and settings say (docs/guarantees.md).
//
// - The record: the reservation (a tick), the epoch and layout it is a tick of,
//   the WAL timeline and the node it was made on, and the cluster's system
//   identifier (record_for() in reservation.hpp fills the same facts into the file).
// - Redo, in the startup process: raises the generator's floor and reservation to
//   the record's tick under the generator's lock (a server in recovery issues
//   nothing, so no call sees it move), lifts a 'state file lost' refusal (the WAL
//   knows what the file would have said), and writes snowflake.state, so that a
//   later start, whose redo begins at a later checkpoint or restartpoint, still
//   finds it. A record of another epoch or layout than the file's raises nothing
//   (its ticks are another scale). While the settings differ from the file's
//   (a start that refuses with 'epoch changed'), a record of the file's is kept
//   for snowflake_adopt_layout(), which puts new IDs above it.
// - What it costs: one record of 64 bytes and one WAL flush a reservation (a
//   reservation covers a lead: 200 ms to 10 s of IDs), and nothing while no ID is
//   issued. The flush never waits for a synchronous standby: the record is not a
//   transaction's.
// - Redo begins at the latest checkpoint's redo pointer: a record before it is
//   not replayed. So the renewal worker logs the reservation again when a
//   checkpoint has passed its record while it is still ahead of the clock (IDs
//   may yet be issued under it): at most once a checkpoint, and never once the
//   clock has passed it. The file, written with every reservation, covers the
//   moment between the checkpoint and that record.
// - The resource manager's ID is kRmgrId; a server whose WAL holds such records
//   cannot replay it without snowflake preloaded (docs/guarantees.md says when
//   that matters: a standby, a crash, a restore; a clean stop leaves nothing to replay).
#pragma once

#include "shmem.hpp"

namespace snowflake {

// snowflake's resource manager ID, among those PostgreSQL leaves to extensions (128 to 255).
constexpr int kRmgrId = 163;

// Registers the resource manager; call from _PG_init while preloading only.
void register_wal_rmgr();

// Logs a reservation up to tick (of the layout and epoch in effect) made on timeline, and flushes the
// WAL up to it. Only on a primary (not in recovery): a standby issues nothing. ERROR if the WAL cannot
// take it (PostgreSQL makes a failed WAL write a PANIC).
void log_reservation(SharedState &state, int64_t tick, uint32_t timeline);

// Whether a checkpoint has begun since the last reservation was logged, so that crash recovery would
// start after that record; true when none was logged in this run (the reservation a start recovered).
bool wal_record_passed(SharedState &state) noexcept;

} // namespace snowflake
