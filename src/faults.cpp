// The test-only faults (faults.hpp): a moved clock and a slow disk, which a
// superuser may inject on a server started with snowflake.fault_injection =
// on, and only there.
#include "faults.hpp"

namespace snowflake {
namespace {

// The largest clock offset a test may inject, either way: 100 years; and the longest write delay: a minute.
constexpr int64_t kMaxClockOffsetMs = int64_t{100} * 36525 * 24 * 3600 * 10;
constexpr int64_t kMaxWriteDelayMs = 60000;

// ERROR unless fault injection is on (a test server) and the caller is a superuser.
void check_fault_injection() {
	if (!fault_injection_enabled)
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake fault injection is disabled"),
		         errhint("Only a test server may set snowflake.fault_injection = on, and it takes a restart.")));
	if (!superuser())
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("only a superuser may inject faults into the snowflake generator")));
}

} // namespace

void inject_clock_offset(int64_t offset_ms) {
	check_fault_injection();
	if (offset_ms < -kMaxClockOffsetMs || offset_ms > kMaxClockOffsetMs)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("clock offset %lld ms is out of range", static_cast<long long>(offset_ms)),
		                errhint("Use an offset within 100 years (%lld ms) either way.",
		                        static_cast<long long>(kMaxClockOffsetMs))));
	SharedState &state = preloaded(); // fault_injection is defined only while preloading
	pg_atomic_write_u64(&state.clock_offset_ms, static_cast<uint64>(offset_ms));
	ereport(WARNING, (errmsg("snowflake: fault injected: the ID generator's clock is now offset by %lld ms",
	                         static_cast<long long>(offset_ms)),
	                  errdetail("Every backend of this server generates IDs with the moved clock.")));
}

void inject_write_delay(int64_t delay_ms) {
	check_fault_injection();
	if (delay_ms < 0 || delay_ms > kMaxWriteDelayMs)
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("write delay %lld ms is out of range", static_cast<long long>(delay_ms)),
		                errhint("Use a delay from 0 to %lld ms.", static_cast<long long>(kMaxWriteDelayMs))));
	SharedState &state = preloaded();
	pg_atomic_write_u64(&state.write_delay_ms, static_cast<uint64>(delay_ms));
	ereport(WARNING, (errmsg("snowflake: fault injected: every reservation write now takes %lld ms longer",
	                         static_cast<long long>(delay_ms))));
}

} // namespace snowflake
