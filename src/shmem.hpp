// The server's one generator, in shared memory: its creation in the
// shared_preload_libraries hooks, the node in effect, and the locked step that
// hands out IDs to every backend and parallel worker of the server.
//
// Locking protocol
// - The postmaster creates SharedState in shmem_startup_hook under
//   AddinShmemInitLock, and initialises it only when ShmemInitStruct reports it
//   new. It never moves afterwards; `lock` is the single LWLock of the named
//   tranche "snowflake". When a crash makes the postmaster re-create shared
//   memory, its on_shmem_exit callback first copies generator.last_id (no lock:
//   every backend is gone), and the new state resumes above it.
// - `generator` is read and written only with `lock` held in LW_EXCLUSIVE mode,
//   for exactly one GeneratorState::next() call: integer work with no I/O, no
//   allocation, no sleep and nothing that can raise an ERROR. The lock is taken
//   once per ID and released before any logging, waiting or error reporting.
// - `node` is written only by the postmaster (at startup and when a reload
//   changes snowflake.node), with an atomic store, and read with an atomic load
//   under `lock`; the next ID any backend issues after the store uses it.
// - `clock_offset_ms` works the same way, but is stored by the backend that
//   calls inject_clock_offset() (tests only; see snowflake.fault_injection).
#pragma once

#include <cstdint>

namespace snowflake {

// Hooks the shared state into server start; call from _PG_init while preloading only.
void install_shmem_hooks();

// Makes node the one the next ID uses; acts only in the postmaster, once the state exists.
void publish_node(int node) noexcept;

// Moves the generator's clock for every backend by offset_ms; ERROR unless fault
// injection is on and the caller is a superuser. Logged as a WARNING.
void inject_clock_offset(int64_t offset_ms);

// The next ID of this server, strictly above every ID it issued since start; ERRORs say why not.
int64_t next_id();

} // namespace snowflake
