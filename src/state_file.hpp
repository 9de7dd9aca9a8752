// The durable high-water mark: $PGDATA/snowflake.state, a small CRC-checked
// record of which cluster wrote it (pg_control's system identifier), the
// layout IDs are issued with (epoch, bit widths and tick), the reservation (a
// time no issued ID exceeds), the WAL timeline it was made on, and how long
// the last writes took. The generator never issues an ID past the recorded
// reservation, so after any restart or crash, resuming above it can never
// repeat an ID, whatever the clock says.
//
// How it is written. The postmaster creates the file at the first start with
// snowflake preloaded, before any ID, so that the epoch and layout are on
// record for every server that decodes IDs, not only those that issue them;
// it rewrites an older version's file, or another cluster's, at start. After
// that every reservation is one write of the record in place, inside the
// first 512-byte sector, and one fsync, as PostgreSQL writes pg_control:
// a sector write is taken to be atomic, and a torn one would fail the CRC
// (the file is then reported damaged, never trusted). Only a missing file is
// created aside and renamed into place (durable_rename).
//
// Who writes it, and when, is reservation.hpp's: a reservation reaches one
// lead past the clock, and the renewal worker renews it ahead of need.
//
// The file and the WAL: every reservation is also a WAL record (wal.hpp),
// and a start takes the larger of the two. Redo writes each reservation it
// replays to the file, so the file keeps what a later redo, starting at a
// later checkpoint, no longer replays; the WAL keeps what a lost, stale or
// foreign file does not.
//
// What that means for copies of the data directory:
// - pg_basebackup and file-level backups copy the file as it was when copied;
//   the WAL a standby or a restored backup (PITR) replays brings the
//   primary's later reservations, up to the last that reached it. Promotion
//   and the end of PITR move the server to a new timeline; a server that
//   finds itself on another timeline than the file's also begins above now +
//   snowflake.max_clock_drift (issuing.cpp) before it writes the new
//   timeline, so that floor survives a restart too. A promoted standby should
//   still get a node ID of its own (docs/many-servers.md).
// - A file written by another cluster (another system identifier: copied in
//   by hand, or a data directory assembled from two) is not trusted: it counts
//   as no file (below), is logged, and the server records itself.
// - The postmaster's write at a clean shutdown carries a mark of that
//   shutdown's checkpoint (exit_mark). After a clean shutdown, a file without
//   the mark of the latest one (a copy put back, a file of 0.4.0 or older) may
//   be older than IDs issued since: the start also takes pg_control's floor
//   (the latest checkpoint time + 1 s + snowflake.max_clock_drift) when that
//   is higher. After a crash the file, renewed ahead of every ID, is trusted,
//   with the WAL's reservation over it. A stop during recovery (a standby's,
//   or one in the middle of crash recovery) is not a clean shutdown: it
//   writes no mark, and counts as a crash.
// - No file of this cluster's (deleted, never made, or another cluster's): if
//   no object was ever created in the cluster, not even the extension, no ID
//   can have been issued, and IDs start at the clock. Otherwise, after a clean
//   shutdown, they start above pg_control's floor; after a crash only the WAL
//   replayed since the latest checkpoint bounds the IDs issued since, and
//   generation refuses (Blocked::StateLost) until redo replays a reservation
//   or a clean stop and start (restart.cpp).
//   pg_upgrade makes such a data directory; its checkpoint is the upgrade's,
//   and its own start (binary-upgrade mode) writes nothing.
// - A symbolic link in the file's place that leads nowhere (a volume that is
//   not mounted), or any name that cannot be opened, is refused as
//   unreadable: never taken for a missing file, never replaced. A link to a
//   file is followed: the file it leads to is written, the link stays.
// - A different epoch or layout (snowflake.layout) at start is refused:
//   generation and decoding stop with an error until the old ones are
//   restored, or the new ones adopted (snowflake_adopt_layout()).
#pragma once

#include "generator.hpp"

#include <cstdint>

namespace snowflake {

// The file's name, relative to the data directory (every server process's working directory).
constexpr const char *kStateFile = "snowflake.state";

// What the file records.
struct StateRecord {
	int64_t epoch_ms;           // the epoch IDs were issued with
	Layout layout;              // the layout they were issued with (a version 1 file: twitter's)
	int64_t reserved_tick;      // no ID issued has a time (ticks of layout since the epoch) above this
	uint32_t timeline;          // the WAL timeline the server was on when it wrote this (0: not known)
	uint64_t system_identifier; // pg_control's, of the cluster that wrote it (0: a file older than 0.3.0)
	int64_t write_latency_us;   // the write latency estimate when it was written (0: none yet)
	uint32_t version;           // the version read (1, 2 or 3); written: always the current one
	uint32_t exit_mark;         // the checkpoint_mark of the clean shutdown whose postmaster wrote it at its
	                            // exit (ControlFacts); 0 for every other write, and in files of 0.4.0 or older
};

enum class StateRead {
	Missing,    // no file, and nothing in its place: nothing was issued with a durable reservation here
	Loaded,     // record holds the file's contents
	Corrupt,    // a file is there, but it is not a valid record
	Unreadable, // the file could not be opened or read (errno says why), or its name is a symbolic
	            // link to nothing (ENOENT: a volume not mounted), which is never taken for no file
};

// Reads the record; never raises an ERROR (it runs in the postmaster), but logs what is wrong.
StateRead read_state(StateRecord &record);

// The version of the record write_state() writes.
constexpr uint32_t kStateVersion = 3;

// Makes record durable: in place with one fsync, or, when there is no file, created aside and renamed
// into place; false (after an ereport at elevel, with PostgreSQL's wording and SQLSTATE) on failure,
// with errno stored in *failed_errno first when it is given.
bool write_state(const StateRecord &record, int elevel, int *failed_errno = nullptr);

// What pg_control says of this cluster's past, for the floor of a start.
struct ControlFacts {
	bool clean_shutdown;       // a primary's clean shutdown was the last thing recorded (not a crash, an
	                           // immediate stop, or a stop during recovery)
	int64_t checkpoint_unix_s; // the time of the latest checkpoint, Unix seconds (rounded down)
	bool objects_created;      // an object was ever created here (the OID counter reached user OIDs)
	uint32_t checkpoint_mark;  // a fingerprint of the latest checkpoint (its WAL position, time and the
	                           // system identifier), never 0: a state file carrying it was written after it
};

// Reads pg_control; false when it cannot be read whole with a valid CRC.
bool read_control(ControlFacts &facts);

// The target of the symbolic link in the state file's place, NUL-terminated; false when it is none.
bool state_file_link(char (&target)[1024]);

} // namespace snowflake
