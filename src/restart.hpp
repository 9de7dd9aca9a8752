// What a server start knows of the IDs issued before it. The postmaster,
// creating the shared state, reads snowflake.state (state_file.hpp) and
// pg_control and sets the floor the first ID of this run must lie above, or
// the reason generation must refuse (Blocked), and logs which. At its exit
// it writes its last word: the exact last ID after a clean shutdown. While
// the recorded layout differs from the settings, decoding refuses too.
#pragma once

#include "shmem.hpp"

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

// Puts the epoch and layout in effect on record in place of the ones snowflake.state holds (a server
// that refuses with 'epoch changed' or 'layout changed'), with a reservation above every ID issued
// under the old ones, so that after a restart every new ID is larger than every old one. Returns the
// Unix ms new IDs start above. ERROR for a non-superuser (42501), when there is nothing to adopt, and
// when new IDs would be smaller than old ones for longer than a call may wait (55000, with the latest
// epoch that works).
int64_t adopt_layout();

// The layout and epoch to decode with; ERROR when this server's IDs would decode differently than
// when they were issued, or when none can be trusted (a custom one without preloading).
LayoutSpec decoding_layout();

} // namespace snowflake
