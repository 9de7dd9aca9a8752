// What a server start knows of the IDs issued before it. The postmaster,
// creating the shared state, reads snowflake.state (state_file.hpp) and
// pg_control and sets the floor the first ID of this run must lie above, or
// the reason generation must refuse (Blocked), and logs which. At its exit
// it writes its last word: the exact last ID after a clean shutdown. While
// the recorded layout differs from the settings, decoding refuses too.
#pragma once

#include "shmem.hpp"
#include "state_file.hpp"

namespace snowflake {

// Sets up a new state from snowflake.state, at server start in the postmaster: the recorded
// reservation becomes a floor, with its timeline and write latency; or, if the file disagrees or
// cannot be read, the reason the generator must refuse. Puts this server on record in the file when
// it has none, one of an older version, or another cluster's.
void recover_reservation(SharedState &state);

// At the postmaster's exit: after a clean shutdown (as pg_control records it), lowers the
// reservation on disk to the exact last ID. After a crash or an immediate stop it writes nothing.
void record_last_id_at_exit(SharedState &state, int exit_code);

// Where a start's floor came from, in words ("the reservation recorded in "snowflake.state"", ...).
const char *floor_origin(StartFloor floor) noexcept;

// The Readiness of a generator its start found unable to run, else Ok.
Readiness blocked_readiness(const SharedState &state) noexcept;

// Raises the ERROR of a generator that its start found unable to run (Blocked), if it is.
void check_not_blocked(const SharedState &state);

// The highest tick (of record's epoch and layout) an old ID may have, by what this start knows: the
// record's reservation, the last the WAL replayed, and, when the file was not the last word at start,
// pg_control's floor as it was at start (every ID before a clean shutdown lies below it).
int64_t old_ids_bound(const SharedState &state, const StateRecord &record, const Policy &policy) noexcept;

// Ends a claim on the writer's role taken to write the state file outside a reservation (an adoption,
// a layout on record blocking the generator): after the write, and as an error cleanup when the write
// raises an ERROR or its process exits mid-write, so that the claim never outlives it.
extern "C" void end_adoption_write(int, Datum arg);

// The layout and epoch to decode with; ERROR when this server's IDs would decode differently than
// when they were issued, or when none can be trusted (a custom one without preloading).
LayoutSpec decoding_layout();

} // namespace snowflake
