// The durable reservation: no ID is issued past a time recorded in
// snowflake.state (state_file.hpp), so every start resumes above every ID the
// server ever issued. This is where the reservation is recovered at start,
// sized (its lead), written and renewed, and where a call that finds it spent
// writes the next one or waits for the process that does.
//
// The protocol (the fields are shmem.hpp's):
// - A reservation reaches one lead past the clock (generator.hpp: four
//   writes' time as measured, 200 ms to 10 s), or one lead past the tick the
//   ID needing it lies in, when that is ahead of the clock (only to that tick
//   for the first reservation of a run).
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
// - Every wait is bounded: a call waits for reservations at most
//   kReservationWaitMs in all, then fails with 58030 naming the process that
//   writes. The writer's claim is never taken from it, however long its write
//   lasts: a process that took over a write stuck in fsync would block on the
//   same storage, and a late write of the old claim could then overwrite a
//   newer, higher reservation and lower the durable mark.
#pragma once

#include "shmem.hpp"
#include "state_file.hpp"

namespace snowflake {

// The policy the settings describe, with the lead the write latency estimate sizes now.
Policy policy_now(SharedState &state) noexcept;

// The state file's record of this server: its layout, a reservation up to reserved_tick made on
// timeline, the write latency estimate now.
StateRecord record_for(SharedState &state, int64_t reserved_tick, uint32_t timeline) noexcept;

// How long one call waits for a reservation in all, for another process's write or for its own
// writes to outlast what they reserve: the longest lead. A write of its own, once begun, runs to
// its end (a write cannot be interrupted), so a call takes at most this plus one write.
constexpr int64_t kReservationWaitMs = kMaxLeadMs;

// A reservation write needed by calls (the reservation is spent) that has been under way this long
// is reported as stalled (snowflake_state()): calls are waiting for it.
constexpr int64_t kStalledAfterMs = 1000;

// One call's wait for a reservation.
struct ReservationWait {
	int64_t deadline_us = -1; // on the monotonic clock; set by the first reserve_or_wait() of the call
};

// Called with the generator's lock held, after a step asked for a reservation up to reserve_tick:
// releases the lock, then either writes that reservation (this process claims the writer's role) or
// waits, cancellably, for the process writing one, until the call's deadline. The caller then
// steps again. ERROR 58030 once the deadline has passed and there is still no reservation.
void reserve_or_wait(SharedState &state, int64_t reserve_tick, ReservationWait &wait);

// What the renewal worker also does at each of its rounds (about a second apart, at once after a reload,
// later while it writes a reservation), after the settings are reloaded: snowflake.cpp hands in the
// node check's keeper.
using EachRound = void (*)(SharedState &state);

// The renewal worker's body: renews the reservation ahead of need until the server stops, calling
// each_round at each round.
[[noreturn]] void renew_reservations(EachRound each_round);

} // namespace snowflake
