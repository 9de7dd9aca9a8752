// Faults a test injects into a running server: the generator's clock moved
// and every reservation write slowed down. Both need snowflake.fault_injection
// = on (a restart-only setting, off by default) and a superuser, and log a
// WARNING; the moved clock and the delay live in shared memory (shmem.hpp).
#pragma once

#include "shmem.hpp"

namespace snowflake {

// Moves the generator's clock for every backend by offset_ms; ERROR unless fault injection is on
// and the caller is a superuser. Logged as a WARNING.
void inject_clock_offset(int64_t offset_ms);

// Makes every reservation write take delay_ms longer (a slow disk), under the same conditions.
void inject_write_delay(int64_t delay_ms);

} // namespace snowflake
