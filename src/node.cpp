// The node in effect and where it comes from (see node.hpp for the
// publication protocol): the settings read with the host name and the
// postmaster's environment, the Citus group the node check hands in, the
// refusal of a conflicting node, and the words and errors for each; the
// node check's pass reads the Citus group here.
#include "node.hpp"

#include <unistd.h>

namespace snowflake {
namespace {

// The configured node packed in one word: the node's 32 bits, then the problem, then the kind.
uint64_t pack(const DerivedNode &node, NodeSourceKind kind) noexcept {
	return uint64_t{static_cast<uint32_t>(node.node)} | uint64_t{static_cast<uint32_t>(node.problem)} << 32 |
	       uint64_t{static_cast<uint32_t>(kind)} << 40;
}

// The node, problem and kind of a packed word.
ConfiguredNode unpack(uint64_t word, int64_t number) noexcept {
	return ConfiguredNode{static_cast<int32_t>(static_cast<uint32_t>(word)),
	                      static_cast<NodeProblem>((word >> 32) & 0xff),
	                      static_cast<NodeSourceKind>((word >> 40) & 0xff), number};
}

// The node word the published facts give now (node.hpp): the configured node is read before the
// counts of moves, which a move grows before it publishes its node.
uint32 node_word_of_facts(SharedState &state) noexcept {
	const ConfiguredNode configured = unpack(pg_atomic_read_u64(&state.configured_node), -1);
	const int32_t refused = static_cast<int32_t>(pg_atomic_read_u32(&state.refused_node));
	pg_read_barrier();
	const bool moving = pg_atomic_read_u32(&state.node_changes) != pg_atomic_read_u32(&state.node_moves_cleared);
	return configured.node < 0 ? static_cast<uint32>(-1)
	                           : static_cast<uint32>(configured.node) |
	                                 (configured.node == refused || moving ? kNodeHeld : 0);
}

// Recomputes the node word from the facts (node_word_of_facts) after reading it, and retries when
// another process changed the word meanwhile; then checks the word against the facts read again, and
// retries when they differ: a process whose facts were stale may have written the word after this
// one's facts were stored, and whichever of the two checks last sees both.
void update_node_in_effect(SharedState &state) noexcept {
	for (;;) {
		pg_memory_barrier(); // the fact the caller stored is read below
		uint32 old = pg_atomic_read_u32(&state.node);
		pg_memory_barrier();
		const uint32 word = node_word_of_facts(state);
		if (old != word && !pg_atomic_compare_exchange_u32(&state.node, &old, word))
			continue;
		pg_memory_barrier();
		if (node_word_of_facts(state) == pg_atomic_read_u32(&state.node))
			return;
	}
}

// Counts a move of the configured node from was to node (node.hpp), before the move is published, and
// returns how many it counted (0 for a node unchanged, or none) for moves_done once it is.
uint32 count_move(SharedState &state, int32_t was, int32_t node) noexcept {
	if (node < 0 || node == was)
		return 0;
	pg_atomic_write_u64(&state.node_changed_us, static_cast<uint64>(monotonic_us()));
	pg_atomic_fetch_add_u32(&state.node_changes, 1);
	return 1;
}

// Marks the moves counted (count_move) as published, after the node word holds them (node.hpp).
void moves_done(SharedState &state, uint32 counted) noexcept {
	if (counted > 0)
		pg_atomic_fetch_add_u32(&state.node_moves_done, counted);
}

// The host name, NUL-terminated (empty when it cannot be read).
void host_name(char (&out)[256]) noexcept {
	if (gethostname(out, sizeof(out)) != 0)
		out[0] = '\0';
	out[sizeof(out) - 1] = '\0';
}

// Raises the ERROR of a call whose node a conflict refuses: SN001, naming the other server (the node
// check's report).
[[noreturn]] void raise_node_conflict(SharedState &state, int32_t node) {
	char report[192];
	(void)node_check_report(state, report);
	ereport(ERROR, (errcode(MAKE_SQLSTATE('S', 'N', '0', '0', '1')),
	                errmsg("snowflake node %d is claimed by another server, which took it first", node),
	                errdetail("The other server: %s. Two servers on one node can issue the same IDs.", report),
	                errhint("Give this server a node of its own (snowflake.node, or snowflake.node_source) and reload "
	                        "the configuration. If the other server is gone for good, release its claim instead: "
	                        "SELECT snowflake_release_claim('...') in database \"%s\" here, with the identity in "
	                        "parentheses above. Silence never lifts the refusal.",
	                        check_database)));
	pg_unreachable();
}

} // namespace

DerivedNode derive_node() noexcept {
	const int32_t max_node = layout_setting.layout.max_node();
	if (node_source_kind == NodeSourceKind::Setting)
		return node_setting >= 0 ? DerivedNode{node_setting, NodeProblem::None, node_setting}
		                         : DerivedNode{-1, NodeProblem::Unset, -1};
	if (node_setting >= 0)
		return DerivedNode{-1, NodeProblem::SetTwice, -1};
	switch (node_source_kind) {
	case NodeSourceKind::HostName: {
		char name[256];
		host_name(name);
		return node_from_host_name(name, node_offset_setting, max_node);
	}
	case NodeSourceKind::Environment: {
		const char *value = getenv(node_source_variable);
		return node_from_variable(value != nullptr ? value : "", value != nullptr, node_offset_setting, max_node);
	}
	case NodeSourceKind::Citus:
	case NodeSourceKind::Setting:
		break;
	}
	return DerivedNode{-1, NodeProblem::CitusPending, -1};
}

ConfiguredNode configured_node(SharedState &state) noexcept {
	const uint64_t word = pg_atomic_read_u64(&state.configured_node);
	pg_read_barrier();
	return unpack(word, static_cast<int64_t>(pg_atomic_read_u64(&state.node_number)));
}

void publish_configured_node(SharedState &state) noexcept {
	DerivedNode derived = derive_node();
	uint64 old = pg_atomic_read_u64(&state.configured_node);
	uint32 counted = 0;
	for (;;) {
		// A group the node check read stays, with the offset in effect now; it reads it again anyway.
		const ConfiguredNode was = unpack(old, static_cast<int64_t>(pg_atomic_read_u64(&state.node_number)));
		if (derived.problem == NodeProblem::CitusPending && was.kind == NodeSourceKind::Citus &&
		    (was.problem == NodeProblem::None || was.problem == NodeProblem::OutOfRange) && was.number >= 0)
			derived = node_from_number(was.number, node_offset_setting, layout_setting.layout.max_node());
		counted += count_move(state, was.node, derived.node);
		pg_atomic_write_u64(&state.node_number, static_cast<uint64>(derived.number));
		if (pg_atomic_compare_exchange_u64(&state.configured_node, &old, pack(derived, node_source_kind)))
			break;
	}
	update_node_in_effect(state);
	moves_done(state, counted);
}

void publish_citus_group(SharedState &state, int64_t group, NodeProblem problem) noexcept {
	const DerivedNode derived = problem == NodeProblem::None
	                                ? node_from_number(group, node_offset_setting, layout_setting.layout.max_node())
	                                : DerivedNode{-1, problem, group};
	uint64 old = pg_atomic_read_u64(&state.configured_node);
	uint32 counted = 0;
	// Only while the source published is 'citus': a reload may have moved away from it meanwhile.
	while (unpack(old, -1).kind == NodeSourceKind::Citus) {
		counted += count_move(state, unpack(old, -1).node, derived.node);
		pg_atomic_write_u64(&state.node_number, static_cast<uint64>(derived.number));
		if (pg_atomic_compare_exchange_u64(&state.configured_node, &old, pack(derived, NodeSourceKind::Citus)))
			break;
	}
	update_node_in_effect(state);
	moves_done(state, counted);
}

void read_citus_group(SharedState &state) {
	if (SPI_execute("SELECT pg_catalog.to_regclass('pg_catalog.pg_dist_local_group') IS NOT NULL", true, 1) !=
	        SPI_OK_SELECT ||
	    strcmp(spi_text(0, 1), "t") != 0) {
		publish_citus_group(state, -1, NodeProblem::CitusNotInstalled);
		return;
	}
	if (SPI_execute("SELECT (SELECT groupid FROM pg_catalog.pg_dist_local_group), "
	                "EXISTS (SELECT FROM pg_catalog.pg_dist_node)",
	                true, 1) != SPI_OK_SELECT ||
	    SPI_processed != 1 || *spi_text(0, 1) == '\0') {
		publish_citus_group(state, -1, NodeProblem::CitusUnreadable);
		return;
	}
	const int64_t group = strtoll(spi_text(0, 1), nullptr, 10);
	const bool listed = strcmp(spi_text(0, 2), "t") == 0;
	publish_citus_group(state, group, group == 0 && !listed ? NodeProblem::CitusNotInCluster : NodeProblem::None);
}

void refuse_node(SharedState &state, int32_t node) noexcept {
	pg_atomic_write_u32(&state.refused_node, static_cast<uint32>(node));
	update_node_in_effect(state);
}

bool held_by_refusal(SharedState &state, int32_t word) noexcept {
	return word >= 0 && (static_cast<uint32_t>(word) & kNodeHeld) != 0 &&
	       static_cast<int32_t>(static_cast<uint32_t>(word) & ~kNodeHeld) ==
	           static_cast<int32_t>(pg_atomic_read_u32(&state.refused_node));
}

void clear_moves(SharedState &state, uint32 changes) noexcept {
	uint32 old = pg_atomic_read_u32(&state.node_moves_cleared);
	while (static_cast<int32>(changes - old) > 0 &&
	       !pg_atomic_compare_exchange_u32(&state.node_moves_cleared, &old, changes)) {
	}
	update_node_in_effect(state);
}

int32_t node_for_readers(SharedState &state) noexcept {
	const int32_t word = node_in_effect(state);
	return word < 0 || held_by_refusal(state, word) ? word
	                                                : static_cast<int32_t>(static_cast<uint32_t>(word) & ~kNodeHeld);
}

Readiness node_readiness(SharedState &state, int32_t word, const Policy &policy) noexcept {
	if (word >= 0 && (static_cast<uint32_t>(word) & kNodeHeld) != 0)
		return Readiness::NodeConflict;
	if (word >= 0)
		return word == policy.reserved_node ? Readiness::NodeReserved : Readiness::NodeOutOfRange;
	switch (configured_node(state).problem) {
	case NodeProblem::None:
	case NodeProblem::Unset:
		return Readiness::NodeUnset;
	case NodeProblem::SetTwice:
		return Readiness::NodeSetTwice;
	case NodeProblem::NoDigitsInHostName:
		return Readiness::NoNodeInHostName;
	case NodeProblem::VariableUnset:
		return Readiness::NodeVariableUnset;
	case NodeProblem::VariableInvalid:
		return Readiness::NodeVariableInvalid;
	case NodeProblem::OutOfRange:
		return Readiness::NodeOutOfRange;
	case NodeProblem::CitusNotInstalled:
	case NodeProblem::CitusUnreadable:
	case NodeProblem::CitusNotInCluster:
	case NodeProblem::CitusPending:
		return Readiness::CitusGroupUnknown;
	}
	return Readiness::NodeUnset;
}

void raise_node_error(SharedState &state, int32_t word, const Policy &policy) {
	const int max_node = policy.layout.max_node();
	if (word >= 0 && (static_cast<uint32_t>(word) & kNodeHeld) != 0)
		raise_node_conflict(state, static_cast<int32_t>(static_cast<uint32_t>(word) & ~kNodeHeld));
	if (word >= 0 && word == policy.reserved_node)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("snowflake.node %d is reserved for backfilled IDs by snowflake.backfill_node", word),
		                errhint("Give this server another node, or reserve another node for backfill.")));
	const ConfiguredNode configured = configured_node(state);
	char name[256];
	host_name(name);
	const char *value = node_source_kind == NodeSourceKind::Environment ? getenv(node_source_variable) : nullptr;
	switch (configured.problem) {
	case NodeProblem::None: // a node out of the layout's range, which no source gives
	case NodeProblem::OutOfRange:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_offset %d and the number snowflake.node_source gives, %lld, make a node outside "
		                "0 to %d",
		                node_offset_setting, static_cast<long long>(configured.number), max_node),
		         errhint("Choose a snowflake.node_offset that keeps every server's node within 0 to %d, or a layout "
		                 "with more node bits, then reload the configuration.",
		                 max_node)));
	case NodeProblem::Unset:
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE), errmsg("snowflake.node is not set"),
		                errdetail("Every server that generates snowflake IDs needs a node ID of its own."),
		                errhint("Add \"snowflake.node = N\" to postgresql.conf, with an N from 0 to %d that no "
		                        "other server uses, or choose a snowflake.node_source, then reload the configuration.",
		                        max_node)));
	case NodeProblem::SetTwice:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node is set, and snowflake.node_source is not 'setting'"),
		         errdetail("A server takes its node from one source; snowflake does not guess which one was meant."),
		         errhint("Remove the snowflake.node line (and any ALTER SYSTEM value of it), or set "
		                 "snowflake.node_source = 'setting', then reload the configuration.")));
	case NodeProblem::NoDigitsInHostName:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_source is 'hostname', but the host name \"%s\" does not end in a number", name),
		         errhint("Name each server NAME-N, as a StatefulSet or CloudNativePG names its pods, or choose another "
		                 "snowflake.node_source, then reload the configuration.")));
	case NodeProblem::VariableUnset:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_source is 'env:%s', but the server's environment has no %s", node_source_variable,
		                node_source_variable),
		         errdetail("The environment the server was started in counts; it cannot change without a restart."),
		         errhint("Set %s to this server's number where the server is started (a Kubernetes pod can take it "
		                 "from its apps.kubernetes.io/pod-index label through the downward API), then restart it.",
		                 node_source_variable)));
	case NodeProblem::VariableInvalid:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_source is 'env:%s', but %s is \"%s\", not a whole number", node_source_variable,
		                node_source_variable, value != nullptr ? value : ""),
		         errhint("Set %s to decimal digits alone, such as 3, where the server is started, then restart it.",
		                 node_source_variable)));
	case NodeProblem::CitusNotInstalled:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_source is 'citus', but Citus is not installed in database \"%s\"",
		                check_database),
		         errhint("Set snowflake.database to the database where Citus and snowflake are installed, and restart; "
		                 "or choose another snowflake.node_source.")));
	case NodeProblem::CitusNotInCluster:
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("snowflake.node_source is 'citus', but this server is in no Citus cluster's metadata yet"),
		         errdetail("Until a coordinator adds it, its group is 0, the coordinator's, which it must not take."),
		         errhint("Add this server with citus_add_node() on the coordinator; on a coordinator, register it with "
		                 "citus_set_coordinator_host(). IDs follow within snowflake.node_check_interval.")));
	case NodeProblem::CitusUnreadable:
	case NodeProblem::CitusPending:
		break;
	}
	ereport(ERROR,
	        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	         errmsg("snowflake.node_source is 'citus', but this server's Citus group %s",
	                configured.problem == NodeProblem::CitusPending ? "has not been read yet" : "could not be read"),
	         errhint("The node check reads it in database \"%s\" every snowflake.node_check_interval (0 turns it "
	                 "off); its errors are in the server log, and snowflake_stats().node_check says how it goes.",
	                 check_database)));
}

const char *node_problem_text(NodeProblem problem) noexcept {
	switch (problem) {
	case NodeProblem::None:
		return "none";
	case NodeProblem::Unset:
		return "snowflake.node is not set";
	case NodeProblem::SetTwice:
		return "snowflake.node is set together with another snowflake.node_source";
	case NodeProblem::NoDigitsInHostName:
		return "the host name does not end in a number";
	case NodeProblem::VariableUnset:
		return "the environment variable snowflake.node_source names is not set";
	case NodeProblem::VariableInvalid:
		return "the environment variable snowflake.node_source names is not a whole number";
	case NodeProblem::OutOfRange:
		return "the number the source gives, plus snowflake.node_offset, is outside the layout's nodes";
	case NodeProblem::CitusNotInstalled:
		return "Citus is not installed in the database of the node check";
	case NodeProblem::CitusUnreadable:
		return "the Citus group could not be read";
	case NodeProblem::CitusNotInCluster:
		return "this server is in no Citus cluster's metadata yet";
	case NodeProblem::CitusPending:
		return "the Citus group has not been read yet";
	}
	return "unknown";
}

void describe_node_origin(const ConfiguredNode &node, char (&out)[160]) noexcept {
	char offset[48] = "";
	if (node.kind != NodeSourceKind::Setting && node_offset_setting != 0)
		snprintf(offset, sizeof(offset), " + snowflake.node_offset %d", node_offset_setting);
	switch (node.kind) {
	case NodeSourceKind::Setting:
		snprintf(out, sizeof(out), "snowflake.node");
		return;
	case NodeSourceKind::HostName: {
		char name[256];
		host_name(name);
		snprintf(out, sizeof(out), "host name %s%s", name, offset);
		return;
	}
	case NodeSourceKind::Environment:
		snprintf(out, sizeof(out), "environment variable %s%s", node_source_variable, offset);
		return;
	case NodeSourceKind::Citus:
		if (node.problem == NodeProblem::CitusNotInCluster)
			snprintf(out, sizeof(out), "Citus group 0, in no cluster yet");
		else if (node.number >= 0)
			snprintf(out, sizeof(out), "Citus group %lld%s", static_cast<long long>(node.number), offset);
		else
			snprintf(out, sizeof(out), "Citus group (not read yet)");
		return;
	}
	out[0] = '\0';
}

} // namespace snowflake
