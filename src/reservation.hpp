// The durable reservation: no ID is issued past a time recorded in
// snowflake.state (state_file.hpp), so every start resumes above every ID the
// server ever issued. This is where the reservation is recovered at start,
// sized (its lead), written and renewed, and where a call that finds it spent
// writes the next one or waits for the process that does.
//
// The protocol (the fields are shmem.hpp's):
// - A reservation reaches one lead past the clock (generator.hpp: four
//   writes' time as measured, 200 ms to 10 s), or to the tick the ID needing
//   it lies in, when that is further ahead.
// - It is written by one process at a time, never under the generator's lock:
//   a process claims `writing` (0 -> 1) with the lock held, releases the lock,
//   writes and fsyncs the file, then takes the lock again to record the new
//   reservation and the write's latency, and clears `writing` and broadcasts
//   `reserved_cv`, also when the write fails or the writer exits mid-write
//   (PG_ENSURE_ERROR_CLEANUP). Meanwhile other backends keep issuing within
//   the reservation already durable.
// - The writer is the background worker "snowflake reservation renewer",
//   which renews when half a lead is left, or a call that found the
//   reservation spent (the first ID after an idle spell, or a renewal that
//   fell behind). A call that finds it spent while another process writes
//   sleeps on `reserved_cv`, cancellably (it holds no lock), until `writing`
//   is 0, then steps again. A call that had to write wakes the worker, so that
//   it renews ahead of need from then on.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// The policy the settings describe, with the lead the write latency estimate sizes now.
Policy policy_now(SharedState &state) noexcept;

// Sets up a new state from snowflake.state, at server start in the postmaster: the recorded
// reservation becomes a floor, with its timeline and write latency; or, if the file disagrees or
// cannot be read, the reason the generator must refuse. Puts this server on record in the file when
// it has none, one of an older version, or another cluster's.
void recover_reservation(SharedState &state);

// Raises the ERROR of a generator that its start found unable to run (Blocked), if it is.
void check_not_blocked(const SharedState &state);

// At the postmaster's exit: after a clean shutdown (as pg_control records it), lowers the
// reservation on disk to the exact last ID. After a crash or an immediate stop it writes nothing.
void record_last_id_at_exit(SharedState &state, int exit_code);

// A call's reservation writes so far, for the rule that ends a call whose writes keep expiring.
struct ReservationAttempts {
	int expired_writes = 0; // this call's writes that ran out before they were on disk
};

// Called with the generator's lock held, after a step asked for a reservation up to reserve_tick:
// releases the lock, then either writes that reservation (this process claims the writer's role) or
// waits, cancellably, for the process writing one. The caller then steps again. ERROR 58030 when
// this call's writes keep running out before they are on disk.
void reserve_or_wait(SharedState &state, const Policy &policy, int64_t reserve_tick, ReservationAttempts &attempts);

// The renewal worker's body: renews the reservation ahead of need until the server stops.
[[noreturn]] void renew_reservations();

} // namespace snowflake
