// The durable high-water mark: $PGDATA/snowflake.state, a small CRC-checked
// record of the layout IDs were issued with (epoch, bit widths and tick), of the
// reservation (a time no issued ID exceeds), and of the WAL timeline it was
// written on. The generator never issues an ID
// past the recorded reservation, so after any restart or crash, resuming
// above it can never repeat an ID, whatever the clock says.
//
// Why a file and not WAL: a reservation must be durable before the ID that
// needs it is returned, from inside snowflake_nextval(), which may run in a
// read-only or aborted-later transaction. WAL-logging it would take either a
// custom resource manager (PG15+, with a registered ID, and replayed by every
// standby) or a table write with its own transaction and buffer lock in the
// hot path. A file written aside, fsynced and renamed into place
// (durable_rename) costs one small write per reservation step (half of
// snowflake.max_clock_drift, so twice a second by default; durable_rename
// fsyncs the new file, the old one and the directory), needs nothing
// from the transaction system, and is atomic: a reader sees the old record or
// the new one, never a torn one.
//
// What that means for copies of the data directory:
// - pg_basebackup and file-level backups copy the file as it was when copied.
//   A standby or a restored backup (PITR) therefore knows the reservation as of
//   the backup, not the primary's latest. Promotion and the end of PITR move
//   the server to a new timeline; a server that finds itself on another
//   timeline than the file's begins above now + snowflake.max_clock_drift
//   (see shmem.cpp) before it writes the new timeline, so that floor survives
//   a restart too. A promoted standby should still get a node ID of its own
//   (README, "Guarantees and failure modes").
// - pg_upgrade starts a new data directory without the file: the first start
//   after it relies on the clock, as a brand-new server does.
// - A different epoch or layout (snowflake.layout) at start is refused: generation and decoding stop with
//   an error until the epoch is restored or the file is removed on purpose.
#pragma once

#include "generator.hpp"

#include <cstdint>

namespace snowflake {

// The file's name, relative to the data directory (every server process's working directory).
constexpr const char *kStateFile = "snowflake.state";

// What the file records.
struct StateRecord {
	int64_t epoch_ms;      // the epoch IDs were issued with
	Layout layout;         // the layout they were issued with (a version 1 file: twitter's)
	int64_t reserved_tick; // no ID issued has a time (ticks of layout since the epoch) above this
	uint32_t timeline;     // the WAL timeline the server was on when it wrote this
};

enum class StateRead {
	Missing,    // no file: nothing was issued with a durable reservation here
	Loaded,     // record holds the file's contents
	Corrupt,    // a file is there, but it is not a valid record
	Unreadable, // the file could not be opened or read (errno says why)
};

// Reads the record; never raises an ERROR (it runs in the postmaster), but logs what is wrong.
StateRead read_state(StateRecord &record);

// Makes record durable, replacing the file atomically; false (after an ereport at elevel) on failure.
bool write_state(const StateRecord &record, int elevel);

// Whether pg_control records a clean shutdown (the checkpointer's last word before the postmaster
// exits); false after an immediate stop or a crash, which leave it "in production", and when unreadable.
bool cluster_shut_down_cleanly();

} // namespace snowflake
