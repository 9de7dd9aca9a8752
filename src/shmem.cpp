// The shared generator (see shmem.hpp for the locking protocol): the request
// and startup hooks that create it, the postmaster's publication of the node,
// the test-only clock offset, and next_id(), which takes the lock for one core
// step and then turns the step's outcome into an ID, a sleep, a log line or an
// ERROR.
#include "shmem.hpp"

#include "pg_boundary.hpp"

#include <algorithm>

namespace snowflake {
namespace {

constexpr const char *kName = "snowflake"; // shared struct and LWLock tranche

struct SharedState {
	LWLock *lock;
	int32_t node;            // node in effect; -1 when unset
	int64_t clock_offset_ms; // added to the system clock; 0 unless a test injected a fault
	GeneratorState generator;
};
static_assert(std::is_trivially_copyable_v<SharedState> && std::is_standard_layout_v<SharedState>,
              "shared memory holds plain data only");

SharedState *shared = nullptr;

// In the postmaster: the last ID issued before shared memory was last torn
// down, so that a crash restart, which re-creates shared memory, resumes above it.
int64_t carried_last_id = -1;

#if SNOWFLAKE_SHMEM_REQUEST_HOOK
shmem_request_hook_type prev_shmem_request_hook = nullptr;
#endif
shmem_startup_hook_type prev_shmem_startup_hook = nullptr;

// A call that keeps being told to wait this long past the drift bound gives up:
// the clock is stuck or keeps stepping back.
constexpr int64_t kWaitGraceMs = 1000;

// The largest clock offset a test may inject, either way: 100 years.
constexpr int64_t kMaxClockOffsetMs = int64_t{100} * 36525 * 24 * 3600 * 10;

// Reserves the struct and the tranche; only valid while preloading.
void request_shmem() {
	RequestAddinShmemSpace(MAXALIGN(sizeof(SharedState)));
	RequestNamedLWLockTranche(kName, 1);
}

extern "C" {

#if SNOWFLAKE_SHMEM_REQUEST_HOOK
// shmem_request_hook: chains, then reserves our space.
static void snowflake_shmem_request(void) {
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	request_shmem();
}
#endif

// on_shmem_exit in the postmaster: keeps the last issued ID for the next shared memory.
static void snowflake_shmem_exit(int, Datum) {
	if (shared != nullptr)
		carried_last_id = std::max(carried_last_id, __atomic_load_n(&shared->generator.last_id, __ATOMIC_RELAXED));
	shared = nullptr;
}

// shmem_startup_hook: attaches to the state, creating it (above any carried ID) if new.
static void snowflake_shmem_startup(void) {
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	shared = nullptr;
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	bool found = false;
	auto *state = static_cast<SharedState *>(ShmemInitStruct(kName, sizeof(SharedState), &found));
	if (!found) {
		state->lock = &GetNamedLWLockTranche(kName)->lock;
		state->node = node_setting;
		state->clock_offset_ms = 0;
		state->generator.reset();
		state->generator.last_id = carried_last_id;
	}
	LWLockRelease(AddinShmemInitLock);
	shared = state;
	if (!IsUnderPostmaster)
		on_shmem_exit(snowflake_shmem_exit, 0);
}

} // extern "C"

// Sleeps up to ms with no lock held; returns early on the latch; honours cancel and timeouts.
void sleep_interruptibly(int64_t ms) {
	(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, static_cast<long>(ms), PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

// Milliseconds on a clock no one can set, to bound the time one call spends waiting.
int64_t monotonic_ms() noexcept {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// Raises the ERROR for a step that can neither issue nor wait.
[[noreturn]] void raise_step_error(const Step &step, int32_t node, const Policy &policy) {
	switch (step.status) {
	case Status::NodeInvalid:
		if (node < 0)
			ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.node is not set"),
			                errdetail("Every server that generates snowflake IDs needs a node ID of its own."),
			                errhint("Add \"snowflake.node = N\" to postgresql.conf, with an N from 0 to %d that no "
			                        "other server uses, then reload the configuration.",
			                        kMaxNode)));
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.node %d is out of range", node),
		         errhint("Set snowflake.node to a value from 0 to %d.", kMaxNode)));
	case Status::ClockBehind:
		ereport(ERROR,
		        (errcode(ERRCODE_SYSTEM_ERROR),
		         errmsg("system clock is %lld ms behind the last snowflake ID issued",
		                static_cast<long long>(step.drift_ms)),
		         errdetail("snowflake.max_clock_drift allows %lld ms.", static_cast<long long>(policy.max_drift_ms)),
		         errhint("Correct the system clock, or raise snowflake.max_clock_drift to ride out larger "
		                 "steps. IDs resume by themselves once the clock catches up.")));
	case Status::BeforeEpoch:
		ereport(ERROR,
		        (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
		         errmsg("system clock reads a time before snowflake.epoch"),
		         errdetail("snowflake.epoch is %lld ms after 1970-01-01 UTC.", static_cast<long long>(policy.epoch_ms)),
		         errhint("Correct the system clock.")));
	case Status::TimeExhausted:
		ereport(ERROR,
		        (errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED), errmsg("snowflake IDs have run out of time"),
		         errdetail("The %d-bit time field counted from snowflake.epoch ends at %s.", kTimeBits,
		                   timestamptz_to_str(unix_ms_to_timestamptz(policy.epoch_ms + kMaxTime))),
		         errhint("Check the system clock; if it is right, this ID space is used up.")));
	case Status::Issued:
	case Status::Wait:
		break;
	}
	elog(ERROR, "snowflake: unexpected generator status %d", static_cast<int>(step.status));
}

} // namespace

void install_shmem_hooks() {
#if SNOWFLAKE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = snowflake_shmem_request;
#else
	request_shmem();
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = snowflake_shmem_startup;
}

void inject_clock_offset(int64_t offset_ms) {
	if (!fault_injection_enabled)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake fault injection is disabled"),
		         errhint("Only a test server may set snowflake.fault_injection = on, and it takes a restart.")));
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("only a superuser may move the snowflake generator's clock")));
	if (offset_ms < -kMaxClockOffsetMs || offset_ms > kMaxClockOffsetMs)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("clock offset %lld ms is out of range", static_cast<long long>(offset_ms)),
		                errhint("Use an offset within 100 years (%lld ms) either way.",
		                        static_cast<long long>(kMaxClockOffsetMs))));
	Assert(shared != nullptr); // fault_injection is defined only while preloading
	__atomic_store_n(&shared->clock_offset_ms, offset_ms, __ATOMIC_RELAXED);
	ereport(WARNING, (errmsg("snowflake: fault injected: the ID generator's clock is now offset by %lld ms",
	                         static_cast<long long>(offset_ms)),
	                  errdetail("Every backend of this server generates IDs with the moved clock.")));
}

void publish_node(int node) noexcept {
	if (shared != nullptr && !IsUnderPostmaster)
		__atomic_store_n(&shared->node, node, __ATOMIC_RELAXED);
}

int64_t next_id() {
	if (shared == nullptr)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake must be loaded via shared_preload_libraries"),
		                errhint("Add snowflake to shared_preload_libraries in postgresql.conf and restart the "
		                        "server.")));
	const Policy policy = current_policy();
	int64_t give_up_at = -1;
	for (;;) {
		LWLockAcquire(shared->lock, LW_EXCLUSIVE);
		const int32_t node = __atomic_load_n(&shared->node, __ATOMIC_RELAXED);
		const int64_t clock = unix_now_ms() + __atomic_load_n(&shared->clock_offset_ms, __ATOMIC_RELAXED);
		const Step step = shared->generator.next(clock, node, policy);
		LWLockRelease(shared->lock);

		if (step.regressed_ms > 0)
			ereport(LOG, (errmsg("snowflake: system clock moved backwards by %lld ms",
			                     static_cast<long long>(step.regressed_ms))));
		if (step.status == Status::Issued) {
			if (step.previous_node >= 0 && step.previous_node != node)
				ereport(LOG, (errmsg("snowflake: node changed from %d to %d", step.previous_node, node)));
			return step.id;
		}
		if (step.status != Status::Wait)
			raise_step_error(step, node, policy);
		const int64_t mono_now = monotonic_ms();
		if (give_up_at < 0)
			give_up_at = mono_now + policy.max_drift_ms + kWaitGraceMs;
		if (mono_now >= give_up_at)
			ereport(ERROR, (errcode(ERRCODE_SYSTEM_ERROR),
			                errmsg("system clock did not advance past the last snowflake ID in %lld ms",
			                       static_cast<long long>(policy.max_drift_ms + kWaitGraceMs)),
			                errhint("Check the system clock: it may be stopped or stepping backwards.")));
		sleep_interruptibly(step.wait_ms);
	}
}

} // namespace snowflake
