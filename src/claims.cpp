// The node check (see claims.hpp for the claim, the worker and the
// refusal): one pass in a transaction of its own through SPI, the decision a
// pass's claims lead to, the report in shared memory, and the start-up wait
// (its words and log lines are in claims_log.cpp).
#include "claims.hpp"

#include "claim_rules.hpp"
#include "claims_log.hpp"
#include "copies.hpp"
#include "node.hpp"
#include "subscriptions.hpp"

#include <algorithm>

namespace snowflake {
namespace {

// A claim on this server's node by another server, as a pass finds it.
struct Rival {
	char server[128];
	int64_t started_us; // when it began issuing under the node, Unix µs
	char identity[64];  // its system identifier and timeline
};

// The moves of the node (`node_changes`) the last pass that reached a decision vouches for, and those
// the pass under way does: every move it counted was published before it read the node it checks.
uint32 pass_node_changes = 0;
uint32 seen_node_changes = 0;

// Ends a pass: records the moves of the node it ran after, once its outcome is published (the node's
// refusal and the status), and wakes the calls waiting for it.
void pass_done(SharedState &state) {
	pg_write_barrier();
	pg_atomic_write_u32(&state.node_checked, pass_node_changes);
	ConditionVariableBroadcast(&state.checked_cv);
}

// Whether the extension in this database is still at 0.5.0 (the library was updated, the catalog not
// yet): its snowflake_claim_node() takes a staleness bound where 0.6.0's takes renew.
bool catalog_at_050 = false;

// The snowflake extension's schema in this database (quoted for SQL), or nullptr when it has none;
// notes whether its catalog is still 0.5.0's.
const char *extension_schema() {
	if (SPI_execute("SELECT pg_catalog.quote_ident(n.nspname), e.extversion FROM pg_catalog.pg_extension e "
	                "JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace "
	                "WHERE e.extname OPERATOR(pg_catalog.=) 'snowflake'",
	                true, 1) != SPI_OK_SELECT ||
	    SPI_processed == 0)
		return nullptr;
	catalog_at_050 = strcmp(spi_text(0, 2), "0.5.0") == 0;
	return pstrdup(spi_text(0, 1));
}

#define SNOWFLAKE_CLAIM_IDENTITY(c)                                                                                     \
	"(" c ".system_identifier OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) " c ".timeline::pg_catalog.text)"

// Checks every claim in this database's table, whatever its node, so that an invalid one is reported.
void check_every_claim() {
	if (SPI_execute("SELECT c.server, " SNOWFLAKE_CLAIM_US("c.started_at") ", " SNOWFLAKE_CLAIM_IDENTITY("c") ", "
	                "c.node::pg_catalog.text, " SNOWFLAKE_CLAIM_US("c.heartbeat") " FROM snowflake_node_check.claims c",
	                true, 0) != SPI_OK_SELECT)
		elog(ERROR, "snowflake: the node check could not read the claims");
	ClaimValues values;
	for (uint64 r = 0; r < SPI_processed; ++r) {
		const int i = static_cast<int>(r);
		(void)believed(ClaimText{spi_text(i, 1), spi_text(i, 3), spi_text(i, 4), spi_text(i, 2), spi_text(i, 5)}, values);
	}
}

// Writes this server's claim on node when it is new or changed, or renew (IDs issued since the last
// write), and reads every claim on it by other servers, however old: the earliest that keeps
// claim_rules.hpp's rules into rival (true when there is one), and the Citus servers that could not be
// asked, with their errors escaped, into unasked ("" when none). A claim in this database's table is
// checked with its heartbeat; a Citus peer's without.
bool earliest_rival(const char *schema, const Self &self, int32_t node, bool renew, Rival &rival,
                    char (&unasked)[192]) {
	const char *query =
	    psprintf("SELECT r.claimant, " SNOWFLAKE_CLAIM_US("r.claimed_at") ", r.identity, "
	             "coalesce(c.node, $1)::pg_catalog.text, CASE WHEN c.node IS NOT NULL THEN " SNOWFLAKE_CLAIM_US(
	                 "c.heartbeat") " END FROM %s.snowflake_claim_node($1, $2, $3, $4, $5, $6) r "
	             "LEFT JOIN snowflake_node_check.claims c ON " SNOWFLAKE_CLAIM_IDENTITY("c") " OPERATOR(pg_catalog.=) "
	             "r.identity ORDER BY r.claimed_at NULLS LAST, r.identity",
	             schema);
	Oid types[6] = {INT4OID, TEXTOID, TEXTOID, INT4OID, INT4OID, TIMESTAMPTZOID};
	Datum values[6] = {Int32GetDatum(node),
	                   CStringGetTextDatum(self.server),
	                   CStringGetTextDatum(self.system_identifier),
	                   Int32GetDatum(self.timeline),
	                   // Between the restart onto this library and the update, 0.5.0's function keeps its
	                   // own rules: the claims live for three intervals and 10 s, renewed at every pass.
	                   Int32GetDatum(catalog_at_050 ? 3 * node_check_interval_s + 10 : renew ? 1 : 0),
	                   TimestampTzGetDatum(PgStartTime)};
	if (SPI_execute_with_args(query, 6, types, values, nullptr, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "snowflake: the node check's query failed");
	bool found = false;
	unasked[0] = '\0';
	for (uint64 r = 0; r < SPI_processed; ++r) {
		const int i = static_cast<int>(r);
		if (SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 3) == nullptr) { // could not be asked
			char escaped[192];
			escape_claim_text(spi_text(i, 1), escaped, sizeof(escaped));
			if (unasked[0] != '\0')
				strlcat(unasked, "; ", sizeof(unasked));
			strlcat(unasked, escaped, sizeof(unasked));
			continue;
		}
		const char *heartbeat = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 5);
		ClaimValues claim;
		if (found || !believed(ClaimText{spi_text(i, 1), spi_text(i, 3), spi_text(i, 4), spi_text(i, 2), heartbeat},
		                       claim))
			continue;
		strlcpy(rival.server, spi_text(i, 1), sizeof(rival.server));
		rival.started_us = claim.started_us;
		strlcpy(rival.identity, spi_text(i, 3), sizeof(rival.identity));
		found = true;
	}
	return found;
}

// Whether two other servers (of two clusters, under two names) claim one node in this database's
// table, as an aggregator that subscribes to both holds them; the node and both, escaped, into report.
bool others_share(const Self &self, char (&report)[192]) {
	const char *query =
	    "SELECT c.node::pg_catalog.text, pg_catalog.string_agg(c.server OPERATOR(pg_catalog.||) ' (' "
	    "OPERATOR(pg_catalog.||) " SNOWFLAKE_CLAIM_IDENTITY("c") " OPERATOR(pg_catalog.||) ')', ' and ' ORDER BY "
	    "c.started_at) FROM snowflake_node_check.claims c WHERE c.system_identifier OPERATOR(pg_catalog.<>) $1 "
	    "AND c.started_at OPERATOR(pg_catalog.<) 'infinity' AND c.heartbeat OPERATOR(pg_catalog.<) 'infinity' "
	    "GROUP BY c.node HAVING pg_catalog.count(DISTINCT c.system_identifier) OPERATOR(pg_catalog.>) 1 "
	    "AND pg_catalog.count(DISTINCT c.server) OPERATOR(pg_catalog.>) 1 ORDER BY c.node LIMIT 1";
	Oid types[1] = {TEXTOID};
	Datum values[1] = {CStringGetTextDatum(self.system_identifier)};
	if (SPI_execute_with_args(query, 1, types, values, nullptr, true, 1) != SPI_OK_SELECT || SPI_processed == 0)
		return false;
	char servers[160];
	escape_claim_text(spi_text(0, 2), servers, sizeof(servers));
	snprintf(report, sizeof(report), "node %s: %s", spi_text(0, 1), servers);
	return true;
}

// The identity of the server the last refusal names (for its HINT), "" when none, and whether it is the
// one this server left as a clone (the other copy holds it, or held it), or the one it took, which
// another server writes too.
char refused_identity[64];
Clone refused_clone = Clone::None;

// The statements that let a subscription bring the claims, for the HINT of 'incomplete' ("" when none).
char subscription_fix[1024];

// IDs issued when this server's claim was last written (-1: not yet read), and the count a pass that
// commits makes the new mark.
int64_t issued_at_write = -1;
int64_t issued_now = -1;

// One pass, inside the caller's transaction with SPI connected: the Citus group, the claim, the
// decision; returns the status, with the report written into report.
NodeCheck one_pass(SharedState &state, char (&report)[192]) {
	report[0] = '\0';
	if (node_source_kind == NodeSourceKind::Citus) // the node first: it needs Citus, not this extension
		read_citus_group(state);
	// The node read below is as new as every move counted, unless one is still being published (node.hpp).
	const uint32 changes = pg_atomic_read_u32(&state.node_changes);
	pg_read_barrier();
	seen_node_changes = pg_atomic_read_u32(&state.node_moves_done) == changes ? changes : pass_node_changes;
	pg_read_barrier();
	const char *schema = extension_schema();
	if (schema == nullptr) {
		snprintf(report, sizeof(report), "no snowflake extension in database \"%s\"", check_database);
		return NodeCheck::NoExtension;
	}
	check_every_claim();
	const int32_t node = configured_node(state).node;
	if (node < 0) { // no node, nothing to claim; a refusal from before is lifted with it
		refuse_node(state, -1);
		return NodeCheck::Ok;
	}
	Self self = self_of(state);
	LWLockAcquire(state.lock, LW_SHARED);
	issued_now = state.generator.counters.issued;
	LWLockRelease(state.lock);
	if (issued_at_write < 0)
		issued_at_write = issued_now; // a start: the claim on record stands until IDs are issued or it changes
	const bool refusing = static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status)) == NodeCheck::Refusing;
	const bool refuse_policy = static_cast<NodeConflictPolicy>(node_conflict_setting) == NodeConflictPolicy::Refuse;
	// Before this pass writes: a copy of this server that issues too. A clone takes an identity of its own
	// (copies.hpp), refusing until it has; it then claims the node as another server would.
	refused_clone = Clone::None;
	if (copy_found(self, node, report, refused_identity)) {
		refuse_node(state, refuse_policy ? node : -1);
		const bool clone = strcmp(refused_identity, self.identity) == 0;
		if (!clone || copy_of()[0] != '\0') { // a clone takes an identity once: then it is refused as any copy
			refused_clone = clone ? Clone::Shared : Clone::None;
			return refuse_policy ? NodeCheck::Refusing : NodeCheck::Warning;
		}
		take_identity_of_own(state, self);
	}
	Rival rival{};
	char unasked[192];
	const bool found = earliest_rival(schema, self, node, issued_now > issued_at_write, rival, unasked);
	const int64_t mine = own_claim_started_us(self);
	if (!found) {
		const bool share = unasked[0] == '\0' && others_share(self, report);
		subscription_fix[0] = '\0';
		if (unasked[0] != '\0')
			snprintf(report, sizeof(report), "could not ask %s", unasked);
		else if (share || !subscription_cannot_bring_claims(report, subscription_fix)) {
			refuse_node(state, -1);
			return share ? NodeCheck::OthersShare : NodeCheck::Ok;
		}
		// A Citus server that could not be asked may hold the claim a refusal waits for: silence never lifts it.
		// A subscription that cannot bring claims (subscriptions.hpp) never brought the one it waited for.
		if (refusing && unasked[0] != '\0')
			return NodeCheck::Refusing;
		refuse_node(state, -1);
		return NodeCheck::Incomplete;
	}
	const bool later = rival.started_us < mine || (rival.started_us == mine && strcmp(rival.identity, self.identity) < 0);
	snprintf(report, sizeof(report), "%s (%s), since %s", rival.server, rival.identity,
	         timestamptz_to_str(unix_ms_to_timestamptz(rival.started_us / 1000)));
	strlcpy(refused_identity, rival.identity, sizeof(refused_identity));
	refused_clone = strcmp(rival.identity, copy_of()) == 0 ? Clone::Left : Clone::None;
	const bool refuse = later && refuse_policy;
	refuse_node(state, refuse ? node : -1);
	return refuse ? NodeCheck::Refusing : NodeCheck::Warning;
}

// A pass in a transaction of its own; an ERROR is caught, reported, and ends only this pass.
void guarded_pass(SharedState &state) {
	static char report[192];
	const NodeCheck was = static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status));
	volatile NodeCheck status = NodeCheck::Failing;
	MemoryContext caller = CurrentMemoryContext;
	seen_node_changes = pass_node_changes; // until the pass reads the moves
	PG_TRY();
	{
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, "snowflake node check");
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "snowflake: SPI_connect failed");
		status = one_pass(state, report);
		SPI_finish();
		PopActiveSnapshot();
		CommitTransactionCommand();
		issued_at_write = std::max(issued_at_write, issued_now); // the claim written (if it was due) is durable
		own_claim_committed();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(caller);
		ErrorData *error = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		strlcpy(report, error->message != nullptr ? error->message : "an error", sizeof(report));
		FreeErrorData(error);
		status = NodeCheck::Failing;
	}
	PG_END_TRY();
	pgstat_report_activity(STATE_IDLE, nullptr);
	publish_node_check(state, status, report, false);
	log_change(was, status, report, configured_node(state).node,
	           status == NodeCheck::Incomplete ? subscription_fix : refused_identity, refused_clone);
	if (status != NodeCheck::Failing) // a pass that failed decided nothing: the calls owed one still wait
		pass_node_changes = seen_node_changes;
	pass_done(state);
}

// Whether a pass of the node check follows status: one a pass or the worker's start leaves, which the
// next pass replaces (not 'off', 'cannot connect', 'no worker slot', nor a reader's 'standby' or 'stale').
bool a_pass_follows(NodeCheck status) noexcept {
	switch (status) {
	case NodeCheck::Starting:
	case NodeCheck::NoExtension:
	case NodeCheck::Failing:
	case NodeCheck::Ok:
	case NodeCheck::Refusing:
	case NodeCheck::Warning:
	case NodeCheck::Incomplete:
	case NodeCheck::OthersShare:
		return true;
	default:
		return false;
	}
}

// How long a call may still wait for the pass the node check owes the node in effect (µs): 0 when it
// owes none (the check is off, or no pass follows its status) or kFirstCheckWaitMs have passed since the
// move. checked is `node_checked`, read before the caller read the node word.
int64_t owed_wait_us(SharedState &state, uint32 checked) noexcept {
	pg_read_barrier();
	if (node_check_interval_s == 0 || pg_atomic_read_u32(&state.node_changes) == checked ||
	    !a_pass_follows(static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status))))
		return 0;
	pg_read_barrier(); // the move's time was stored before it was counted
	const int64_t moved_us = static_cast<int64_t>(pg_atomic_read_u64(&state.node_changed_us));
	return std::max<int64_t>(0, moved_us + kFirstCheckWaitMs * 1000 - monotonic_us());
}

} // namespace

int32_t node_to_step_under(SharedState &state, bool &check_owed) noexcept {
	for (;;) {
		const uint32 checked = pg_atomic_read_u32(&state.node_checked);
		pg_read_barrier();
		const uint32 changes = pg_atomic_read_u32(&state.node_changes);
		const int32_t node = node_in_effect(state);
		check_owed = owed_wait_us(state, checked) > 0;
		if (check_owed || node < 0 || (static_cast<uint32_t>(node) & kNodeHeld) == 0 || held_by_refusal(state, node))
			return node;
		clear_moves(state, changes); // held by moves no pass is owed for any more: let go, and read again
	}
}

void await_node_check(SharedState &state) {
	ConditionVariablePrepareToSleep(&state.checked_cv);
	for (int64_t left_us; (left_us = owed_wait_us(state, pg_atomic_read_u32(&state.node_checked))) > 0;)
		(void)ConditionVariableTimedSleep(&state.checked_cv, static_cast<long>((left_us + 999) / 1000),
		                                  wait_event(WaitFor::NodeCheck));
	ConditionVariableCancelSleep();
}

NodeCheck node_check_as_read(NodeCheck check, int64_t check_at_us) noexcept {
	if (!a_pass_follows(check))
		return check;
	const int64_t bound_us = (kStalePasses * node_check_interval_s + 10) * int64_t{1000000};
	return node_check_interval_s > 0 && check_at_us > 0 && unix_now_us() - check_at_us > bound_us ? NodeCheck::Stale
	                                                                                                : check;
}

void publish_not_checking(SharedState &state, NodeCheck status) {
	const NodeCheck was = static_cast<NodeCheck>(pg_atomic_read_u32(&state.check_status));
	if (status == NodeCheck::Off)
		refuse_node(state, -1);
	publish_node_check(state, status, "", true);
	log_change(was, status, "", -1, "");
}

void check_nodes() {
	SharedState &state = preloaded(); // inherited from the postmaster, which created it
	// A claim's commit does not wait for a synchronous standby: one that stalls would stop the
	// renewals, and a claim gone stale to its peers could lift a refusal.
	SetConfigOption("synchronous_commit", "local", PGC_SUSET, PGC_S_OVERRIDE);
	// It runs as the bootstrap superuser in a database whose owner may create in its schemas: nothing
	// they planted is looked up (CVE-2018-1058's pattern: an exact-match operator in public), whatever
	// search_path ALTER DATABASE or ALTER ROLE set. Every query names pg_catalog's operators besides.
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	publish_node_check(state, NodeCheck::Starting, "", false);
	for (;;) {
		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending) {
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (node_check_interval_s == 0) { // off: nothing claimed, nothing refused, no call waits, no slot held
			publish_not_checking(state, NodeCheck::Off);
			proc_exit(0);
		}
		guarded_pass(state);
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, node_check_interval_s * 1000L,
		                wait_event(WaitFor::NodeCheck));
		ResetLatch(MyLatch);
	}
}

} // namespace snowflake
