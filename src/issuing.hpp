// The path every snowflake_nextval() takes, from the lock to the ID or the
// ERROR: the fast path (one core step with nothing to report, under the
// lock, and nothing else), and the slow path that takes one step at a time
// and turns its outcome into an ID, a sleep for the clock, a reservation
// write or wait (reservation.hpp), a log line or an ERROR. Also what a step
// means for callers, which the snapshot of stats.hpp shares.
#pragma once

#include "shmem.hpp"

namespace snowflake {

// The next ID of this server, above every ID it ever issued; ERRORs say why not.
int64_t next_id();

// Consecutive IDs first..last of this server.
struct IdBlock {
	int64_t first;
	int64_t last;
};

// The next count consecutive IDs of one tick (ERROR 22023 unless 1 <= count <= max_seq + 1): all
// above every ID this server issued, and below every later one; they decode to this node.
IdBlock next_block(int64_t count);

// How long one call may wait for the clock in all before it gives up (see issuing.cpp).
int64_t max_wait_ms(const Policy &policy) noexcept;

// What a step that neither issued nor waited means for callers (node: the node word it used).
Readiness readiness_of(SharedState &state, const Step &step, int32_t node, const Policy &policy) noexcept;

// When a ClockBehind step's refusals end by themselves, the clock running on, in Unix ms of the system
// clock (the generator's, moved by offset_ms, reaches it offset_ms earlier): when the lag behind the
// last ID is within the drift bound, or the next ID above the floor within borrowing.
int64_t resume_unix_ms(const GeneratorState &generator, const Step &step, const Policy &policy,
                       int64_t offset_ms) noexcept;

} // namespace snowflake
