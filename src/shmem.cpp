// The shared generator's memory (see shmem.hpp for the struct and its
// locking protocol): the request and startup hooks that create it and hand it
// to what fills it in, the postmaster's exit hook, and the small shared
// helpers: the state last seen, the node check's report under its sequence
// lock, the monotonic clock, and the wait events.
#include "shmem.hpp"

namespace snowflake {

SharedState *shared_state = nullptr;

namespace {

constexpr const char *kName = "snowflake"; // shared struct and LWLock tranche

shmem_request_hook_type prev_shmem_request_hook = nullptr;
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;
OnCreate on_create = nullptr;
OnExit on_exit = nullptr;

// Sets up a new state: every field as at a fresh start, then what on_create finds on disk.
void initialise(SharedState &state) {
	state.lock = &GetNamedLWLockTranche(kName)->lock;
	state.system_identifier = GetSystemIdentifier();
	state.blocked = Blocked::No;
	state.state_errno = 0;
	state.recorded_epoch_ms = epoch_ms;
	state.recorded_layout = layout_setting.layout;
	state.foreign_file = 0;
	state.file_trusted = 0;
	state.start_checkpoint_s = -1;
	state.start_floor = StartFloor::None;
	state.start_floor_tick = -1;
	state.floor_from = StartFloor::None;
	state.wal_tick = -1;
	state.generator.reset();
	state.timeline = 0;
	state.timeline_checked = 0;
	pg_atomic_init_u32(&state.node, static_cast<uint32>(-1));
	pg_atomic_init_u64(&state.configured_node, static_cast<uint64>(static_cast<uint32>(-1)));
	pg_atomic_init_u64(&state.node_number, static_cast<uint64>(-1));
	pg_atomic_init_u32(&state.refused_node, static_cast<uint32>(-1));
	pg_atomic_init_u64(&state.clock_offset_ms, 0);
	pg_atomic_init_u64(&state.write_delay_ms, 0);
	ConditionVariableInit(&state.reserved_cv);
	pg_atomic_init_u32(&state.writing, 0);
	pg_atomic_init_u64(&state.wal_logged_end, 0);
	pg_atomic_init_u32(&state.writer_pid, 0);
	pg_atomic_init_u64(&state.write_started_us, 0);
	pg_atomic_init_u64(&state.write_latency_us, 0);
	pg_atomic_init_u32(&state.write_errno, 0);
	pg_atomic_init_u64(&state.write_failed_at_us, 0);
	pg_atomic_init_u64(&state.renewer_latch, 0);
	pg_atomic_init_u64(&state.waits, 0);
	pg_atomic_init_u64(&state.wait_us, 0);
	pg_atomic_init_u64(&state.renewals, 0);
	pg_atomic_init_u64(&state.caller_writes, 0);
	pg_atomic_init_u64(&state.caller_waits, 0);
	pg_atomic_init_u32(&state.seen_state, static_cast<uint32>(Readiness::Ok));
	pg_atomic_init_u64(&state.seen_since_us, static_cast<uint64>(unix_now_us()));
	// Starting until the worker says; a single-user backend runs no worker, so its check is off.
	pg_atomic_init_u32(&state.check_status,
	                   static_cast<uint32>(IsPostmasterEnvironment ? NodeCheck::Starting : NodeCheck::Off));
	pg_atomic_init_u64(&state.check_at_us, 0);
	// The start is a move of the node: no call issues under it before the node check's first pass.
	pg_atomic_init_u32(&state.node_changes, 1);
	pg_atomic_init_u32(&state.node_moves_done, 1);
	pg_atomic_init_u64(&state.node_changed_us, static_cast<uint64>(monotonic_us()));
	pg_atomic_init_u32(&state.node_checked, 0);
	pg_atomic_init_u32(&state.node_moves_cleared, 1); // as node_changes: the start's node, once published, is a move held until a first step
	ConditionVariableInit(&state.checked_cv);
	pg_atomic_init_u32(&state.report_version, 0);
	state.report[0] = '\0';
	pg_atomic_init_u32(&state.check_pid, 0);
	pg_atomic_init_u32(&state.check_failed_connects, 0);
	pg_atomic_init_u32(&state.check_leave_for, 0);
	pg_atomic_init_u32(&state.check_registered, 0); // a crash restart forgets the worker with the state
	pg_atomic_init_u64(&state.check_retry_at_us, 0);
	on_create(state);
}

extern "C" {

// shmem_request_hook: chains, then reserves the struct and the tranche.
static void snowflake_shmem_request(void) {
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(SharedState)));
	RequestNamedLWLockTranche(kName, 1);
}

// on_shmem_exit in the postmaster: its last word on disk (on_exit).
static void snowflake_shmem_exit(int code, Datum) {
	if (shared_state == nullptr)
		return;
	on_exit(*shared_state, code);
	shared_state = nullptr;
}

// shmem_startup_hook: attaches to the state, creating it if new.
static void snowflake_shmem_startup(void) {
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	shared_state = nullptr;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found = false;
	auto *state = static_cast<SharedState *>(ShmemInitStruct(kName, sizeof(SharedState), &found));
	if (!found)
		initialise(*state);
	LWLockRelease(AddinShmemInitLock);
	shared_state = state;
	if (!IsUnderPostmaster)
		on_shmem_exit(snowflake_shmem_exit, 0);
}

} // extern "C"

} // namespace

void refuse_unpreloaded() {
	ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	                errmsg("snowflake must be loaded via shared_preload_libraries"),
	                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
	                        "server.")));
	pg_unreachable();
}

bool note_state(SharedState &state, Readiness r) noexcept {
	uint32 seen = pg_atomic_read_u32(&state.seen_state);
	if (seen == static_cast<uint32>(r) || !pg_atomic_compare_exchange_u32(&state.seen_state, &seen, static_cast<uint32>(r)))
		return false;
	pg_atomic_write_u64(&state.seen_since_us, static_cast<uint64>(unix_now_us()));
	return true;
}

void publish_node_check(SharedState &state, NodeCheck status, const char *report, bool wake) noexcept {
	pg_atomic_fetch_add_u32(&state.report_version, 1); // odd: being rewritten
	pg_write_barrier();
	strlcpy(state.report, report, sizeof(state.report));
	pg_write_barrier();
	pg_atomic_fetch_add_u32(&state.report_version, 1);
	pg_atomic_write_u32(&state.check_status, static_cast<uint32>(status));
	pg_atomic_write_u64(&state.check_at_us, static_cast<uint64>(unix_now_us()));
	if (wake && MyProc != nullptr) // a process with no PGPROC (yet, or any more) cannot broadcast
		ConditionVariableBroadcast(&state.checked_cv);
}

NodeCheck node_check_report(SharedState &state, char (&report)[192]) noexcept {
	for (;;) {
		const uint32 before = pg_atomic_read_u32(&state.report_version);
		pg_read_barrier();
		memcpy(report, state.report, sizeof(report));
		pg_read_barrier();
		if (before % 2 == 0 && pg_atomic_read_u32(&state.report_version) == before)
			break;
	}
	report[sizeof(report) - 1] = '\0';
	return static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status));
}

int64_t monotonic_us() noexcept {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

uint32 wait_event(WaitFor what) {
#if SNOWFLAKE_NAMED_WAIT_EVENTS
	static uint32 events[5] = {};
	static const char *const names[5] = {"SnowflakeClock", "SnowflakeReservation", "SnowflakeReservationWrite",
	                                     "SnowflakeRenewer", "SnowflakeNodeCheck"};
	const int i = static_cast<int>(what);
	if (events[i] == 0)
		events[i] = WaitEventExtensionNew(names[i]);
	return events[i];
#else
	(void)what;
	return PG_WAIT_EXTENSION;
#endif
}

void install_shmem_hooks(OnCreate create, OnExit exit) {
	on_create = create;
	on_exit = exit;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;
}


} // namespace snowflake
