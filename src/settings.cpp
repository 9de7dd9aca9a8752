// The snowflake.* settings and their validation: their definitions, the
// check and assign hooks that parse the layout, the epoch and the node source
// once and hand the node to shared memory, the checks at start that stop a
// server with a misspelt or bad value, the log line of the settings in effect,
// and the ERROR with a hint that replaces SET. Loading the library in any
// process defines the reloadable settings; only the postmaster, preloading,
// defines the restart-only ones and reserves the prefix.
#include "settings.hpp"

#include "node.hpp"
#include "public_ids.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace snowflake {

int node_setting = -1;
int max_clock_drift_ms = 1000;
int clock_policy_setting = static_cast<int>(ClockPolicy::Borrow);
int64_t epoch_ms = kTwitterEpochMs;
bool fault_injection_enabled = false;
int backfill_node_setting = -1;
LayoutSpec layout_setting{kTwitter, kTwitterEpochMs, false, "twitter"};
NodeSourceKind node_source_kind = NodeSourceKind::Setting;
char node_source_variable[65] = "";
int node_offset_setting = 0;
char *check_database = nullptr;
int node_check_interval_s = 5;
int node_conflict_setting = static_cast<int>(NodeConflictPolicy::Refuse);

namespace {

char *epoch_text = nullptr;  // snowflake.epoch as written; epoch_ms holds its value
char *layout_text = nullptr; // snowflake.layout as written; layout_setting holds its value
char *node_source_text = nullptr; // snowflake.node_source as written; node_source_kind and _variable hold it

// Every setting's name, for defining it and for re-checking its configured value.
constexpr const char *kNode = "snowflake.node";
constexpr const char *kEpoch = "snowflake.epoch";
constexpr const char *kMaxClockDrift = "snowflake.max_clock_drift";
constexpr const char *kClockPolicy = "snowflake.clock_policy";
constexpr const char *kFaultInjection = "snowflake.fault_injection";
constexpr const char *kBackfillNode = "snowflake.backfill_node";
constexpr const char *kLayout = "snowflake.layout";
constexpr const char *kNodeSource = "snowflake.node_source";
constexpr const char *kNodeOffset = "snowflake.node_offset";
constexpr const char *kDatabase = "snowflake.database";
constexpr const char *kNodeCheckInterval = "snowflake.node_check_interval";
constexpr const char *kNodeConflict = "snowflake.node_conflict";
constexpr const char *kSettings[] = {kLayout,     kEpoch,        kNode,         kNodeSource,      kNodeOffset,
                                     kMaxClockDrift, kClockPolicy, kFaultInjection, kBackfillNode, kDatabase,
                                     kNodeCheckInterval, kNodeConflict};
// The settings that take a restart.
constexpr const char *kRestartOnly[] = {kLayout, kEpoch, kFaultInjection, kDatabase};

// What postgresql.conf (or the command line) set each setting to before it was defined; nullptr if nothing.
const char *configured[std::size(kSettings)] = {};

const config_enum_entry clock_policy_options[] = {
    {"borrow", static_cast<int>(ClockPolicy::Borrow), false},
    {"wait", static_cast<int>(ClockPolicy::Wait), false},
    {nullptr, 0, false},
};

const config_enum_entry node_conflict_options[] = {
    {"refuse", static_cast<int>(NodeConflictPolicy::Refuse), false},
    {"warn", static_cast<int>(NodeConflictPolicy::Warn), false},
    {nullptr, 0, false},
};

// Hands the node the settings give now to the shared generator: in the postmaster, once it exists
// (at start, shmem.cpp's initialise publishes it; node.hpp).
void publish_node() {
	if (shared_state != nullptr && !IsUnderPostmaster)
		publish_configured_node(*shared_state);
}

// Why text is not a usable snowflake.epoch, or nullptr with its value in epoch. In a running server
// (ALTER SYSTEM, a reload) that includes an epoch that does not suit the clock; at start the clock
// itself may be what is wrong, so only what does not depend on it is checked (now = the epoch), and
// check_epoch_suits_layout warns about the rest.
const char *epoch_setting_problem(const char *text, int64_t &epoch) noexcept {
	if (text == nullptr || !parse_epoch(text, epoch))
		return "snowflake.epoch must be a whole number of milliseconds since 1970-01-01 UTC, such as 1288834974657.";
	return epoch_problem(layout_setting.layout, epoch, IsUnderPostmaster ? unix_now_ms() : epoch);
}

// Why text is not a usable snowflake.layout, or nullptr with its value in spec.
const char *layout_setting_problem(const char *text, LayoutSpec &spec) noexcept {
	if (text == nullptr)
		return "snowflake.layout must be twitter, sonyflake, js53 or a spec such as time=39,unit=10ms,node=16,seq=8.";
	if (const char *problem = parse_layout(text, spec))
		return problem;
	if (spec.epoch_given)
		return "snowflake.layout takes no epoch: set snowflake.epoch instead.";
	if (spec.seq_above_node)
		return "snowflake issues IDs with the node above the sequence; order=seq-node is for decoding only.";
	return nullptr;
}

extern "C" {

// Accepts decimal Unix milliseconds that make a usable epoch now; passes the value on in extra.
// The built-in default is only parsed here: whether it suits the layout is checked at start
// (check_epoch_suits_layout), once a configured layout may have replaced the default one.
static bool check_epoch(char **newval, void **extra, GucSource source) {
	int64_t value = 0;
	const char *problem = epoch_setting_problem(*newval, value);
	if (source == PGC_S_DEFAULT && *newval != nullptr && parse_epoch(*newval, value))
		problem = nullptr;
	if (problem != nullptr) {
		GUC_check_errdetail("%s", problem);
		return false;
	}
	auto *parsed = static_cast<int64_t *>(guc_malloc(LOG, sizeof(int64_t)));
	if (parsed == nullptr)
		return false;
	*parsed = value;
	*extra = parsed;
	return true;
}

// Installs the epoch check_epoch parsed.
static void assign_epoch(const char *, void *extra) {
	epoch_ms = *static_cast<int64_t *>(extra);
}

// Accepts a layout spec (layout_setting_problem); passes the parsed layout on in extra. In a
// running server (ALTER SYSTEM, a reload) it also refuses a layout the next start would refuse with
// the epoch it would get: the configured snowflake.epoch, or the new layout's own when the epoch
// in effect is the current layout's default. At start the epoch is not known yet; the start checks
// the pair itself (check_epoch_suits_layout).
static bool check_layout(char **newval, void **extra, GucSource) {
	LayoutSpec spec{};
	const char *problem = layout_setting_problem(*newval, spec);
	if (problem == nullptr && IsUnderPostmaster) {
		problem = epoch_problem(spec.layout, epoch_ms == layout_setting.epoch_ms ? spec.epoch_ms : epoch_ms,
		                        unix_now_ms());
		if (problem != nullptr)
			GUC_check_errhint("The server would issue no ID with it. Set snowflake.epoch first to a later "
			                  "one that suits it, or choose more time bits or a longer unit.");
	}
	if (problem != nullptr) {
		GUC_check_errdetail("%s", problem);
		return false;
	}
	auto *parsed = static_cast<LayoutSpec *>(guc_malloc(LOG, sizeof(LayoutSpec)));
	if (parsed == nullptr)
		return false;
	*parsed = spec;
	*extra = parsed;
	return true;
}

// Installs the layout check_layout parsed.
static void assign_layout(const char *, void *extra) {
	layout_setting = *static_cast<LayoutSpec *>(extra);
}

// Hands a changed node to the shared generator. (PostgreSQL stores the new value after the hook;
// it is stored first here, so that the node derived from all the settings sees it.)
static void assign_node(int newval, void *) {
	node_setting = newval;
	publish_node();
}

// The same for snowflake.node_offset.
static void assign_node_offset(int newval, void *) {
	node_offset_setting = newval;
	publish_node();
}

// Accepts setting, hostname, env:NAME or citus (parse_node_source); passes the parsed source on in extra.
static bool check_node_source(char **newval, void **extra, GucSource) {
	NodeSource source{};
	if (const char *problem = *newval != nullptr ? parse_node_source(*newval, source)
	                                             : "snowflake.node_source is setting, hostname, env:NAME or citus.") {
		GUC_check_errdetail("%s", problem);
		return false;
	}
	auto *parsed = static_cast<NodeSource *>(guc_malloc(LOG, sizeof(NodeSource) + 65));
	if (parsed == nullptr)
		return false;
	char *name = reinterpret_cast<char *>(parsed + 1); // the variable's name, copied after the struct
	memcpy(name, source.variable.data(), source.variable.size());
	name[source.variable.size()] = '\0';
	*parsed = NodeSource{source.kind, std::string_view(name, source.variable.size())};
	*extra = parsed;
	return true;
}

// Installs the node source check_node_source parsed, and hands the node it gives on.
static void assign_node_source(const char *, void *extra) {
	const NodeSource &source = *static_cast<NodeSource *>(extra);
	node_source_kind = source.kind;
	memcpy(node_source_variable, source.variable.data(), source.variable.size());
	node_source_variable[source.variable.size()] = '\0';
	publish_node();
}

} // extern "C"

// Defines the settings any process may define: the reloadable ones. The nodes' range is the
// layout's (defined first when preloading; twitter's 0..1023 otherwise), -1 meaning unset.
void define_reloadable_settings() {
	DefineCustomIntVariable(kNode, "Sets the node ID that this server writes into every snowflake ID.",
	                        "From 0 to the layout's last node (1023 on twitter), unique among all servers that "
	                        "generate IDs together; -1 (the default) means unset, and snowflake_nextval() then "
	                        "refuses to run.",
	                        &node_setting, -1, -1, layout_setting.layout.max_node(), PGC_SIGHUP, 0, nullptr,
	                        assign_node, nullptr);
	DefineCustomStringVariable(kNodeSource, "Sets where this server's node ID comes from.",
	                           "setting (the default: snowflake.node), hostname (the trailing digits of the host "
	                           "name), env:NAME (the postmaster's environment variable NAME) or citus (this "
	                           "server's Citus group id).",
	                           &node_source_text, "setting", PGC_SIGHUP, 0, check_node_source, assign_node_source,
	                           nullptr);
	DefineCustomIntVariable(kNodeOffset, "Sets the number added to the node that snowflake.node_source derives.",
	                        "From 0 to the layout's last node; lets two sets of servers share one ID space (0 and "
	                        "512, say). Not used with snowflake.node_source = setting.",
	                        &node_offset_setting, 0, 0, layout_setting.layout.max_node(), PGC_SIGHUP, 0, nullptr,
	                        assign_node_offset, nullptr);
	DefineCustomIntVariable(kNodeCheckInterval,
	                        "Sets how often the node check looks for another server on this server's node.",
	                        "0 turns the check off.", &node_check_interval_s, 5, 0, 90, PGC_SIGHUP, GUC_UNIT_S,
	                        nullptr, nullptr, nullptr);
	DefineCustomEnumVariable(kNodeConflict,
	                         "Sets what the server that took a node later does when the node check finds its node "
	                         "taken by another server.",
	                         "refuse (the default) refuses IDs until the node is fixed; warn keeps issuing, and both "
	                         "servers warn.",
	                         &node_conflict_setting, static_cast<int>(NodeConflictPolicy::Refuse),
	                         node_conflict_options, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
	DefineCustomIntVariable(kMaxClockDrift,
	                        "Sets how far the system clock may fall behind the last issued ID before "
	                        "snowflake_nextval() raises an error.",
	                        "Within this bound snowflake borrows or waits, as snowflake.clock_policy says.",
	                        &max_clock_drift_ms, 1000, 0, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr,
	                        nullptr);
	DefineCustomIntVariable(kBackfillNode, "Sets the node ID reserved for backfilled IDs (snowflake_backfill_id()).",
	                        "From 0 to the layout's last node (1023 on twitter), the same on every server and used "
	                        "by none of them as snowflake.node; -1 (the default) means no backfill.",
	                        &backfill_node_setting, -1, -1, layout_setting.layout.max_node(), PGC_SIGHUP, 0, nullptr,
	                        nullptr, nullptr);
	DefineCustomEnumVariable(kClockPolicy,
	                         "Sets what snowflake_nextval() does while the clock is behind the last issued ID.",
	                         "borrow keeps issuing from the last issued millisecond onwards; wait sleeps until the "
	                         "clock catches up.",
	                         &clock_policy_setting, static_cast<int>(ClockPolicy::Borrow), clock_policy_options,
	                         PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
}

// Defines the restart-only settings, which only the postmaster may define: the layout first, so
// the epoch (checked against the layout's lifetime) and the nodes (against its node bits) can
// be checked against it. A preset with an epoch of its own (sonyflake) makes that epoch the
// default of snowflake.epoch; a configured snowflake.epoch still wins.
void define_startup_settings() {
	DefineCustomStringVariable(kLayout, "Sets the bit layout of snowflake IDs.",
	                           "twitter (the default: 41 bits of ms, 10 node, 12 sequence), sonyflake (39 bits of "
	                           "10 ms, 16, 8), js53 (41 bits of ms, 5, 7: IDs below 2^53), or a spec such as "
	                           "time=39,unit=10ms,node=16,seq=8.",
	                           &layout_text, "twitter", PGC_POSTMASTER, 0, check_layout, assign_layout, nullptr);
	DefineCustomStringVariable(kEpoch, "Sets the time, in Unix milliseconds, that snowflake IDs count from.",
	                           "The default is Twitter's epoch, 2010-11-04 01:42:54.657 UTC. Changing it changes "
	                           "the time decoded from every existing ID.",
	                           &epoch_text, "1288834974657", PGC_POSTMASTER, 0, check_epoch, assign_epoch, nullptr);
	if (layout_setting.epoch_ms != kTwitterEpochMs) {
		char text[32];
		snprintf(text, sizeof(text), "%lld", static_cast<long long>(layout_setting.epoch_ms));
		SetConfigOption(kEpoch, text, PGC_POSTMASTER, PGC_S_DYNAMIC_DEFAULT);
	}
	DefineCustomStringVariable(kDatabase, "Sets the database the node check connects to.",
	                           "The database where the snowflake extension (and, for snowflake.node_source = citus, "
	                           "Citus) is installed.",
	                           &check_database, "postgres", PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
	DefineCustomBoolVariable(kFaultInjection,
	                         "Lets superusers move the ID generator's clock (snowflake_inject_clock_offset()) and slow "
	                         "its reservation writes (snowflake_inject_write_delay()).",
	                         "For test servers only; never turn it on in production.", &fault_injection_enabled, false,
	                         PGC_POSTMASTER, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
	if (fault_injection_enabled)
		ereport(WARNING, (errmsg("snowflake.fault_injection is on: superusers can move the ID generator's clock and "
		                         "slow its reservation writes"),
		                  errhint("Never enable fault injection on a production server.")));
}

// Without preloading, snowflake.epoch and snowflake.layout are placeholders that a reload could
// change for later backends, so nothing can hold them fixed: decode only with the default epoch
// and layout, and mark the epoch unusable (-1) when another epoch or layout is configured.
// Raises nothing, so loading always succeeds.
void settle_unpreloaded_epoch() {
	if (GetConfigOption(kEpoch, true, false) != nullptr) {
		const char *text = GetConfigOptionResetString(kEpoch);
		int64_t value = 0;
		if (text != nullptr && *text != '\0' && !(parse_epoch(text, value) && value == kTwitterEpochMs))
			epoch_ms = -1;
	}
	if (GetConfigOption(kLayout, true, false) != nullptr) {
		const char *text = GetConfigOptionResetString(kLayout);
		LayoutSpec spec{};
		if (text != nullptr && *text != '\0' &&
		    !(parse_layout(text, spec) == nullptr && spec.layout == kTwitter && !spec.epoch_given))
			epoch_ms = -1;
	}
}

// Warns, at start, when the epoch in effect (perhaps the default) does not suit the layout at the
// system clock's reading. The server starts all the same: a clock wrong at boot (a dead RTC reading
// 2009, a VM restored in 2081) must only stop ID generation, which refuses with its own clock error.
void check_epoch_suits_layout() {
	const int64_t now_ms = unix_now_ms();
	if (const char *problem = epoch_problem(layout_setting.layout, epoch_ms, now_ms)) {
		char spec[64];
		format_layout(layout_setting.layout, spec);
		ereport(WARNING, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                  errmsg("snowflake.epoch %lld does not suit snowflake.layout \"%s\" (%s) at the system clock's "
		                         "reading, %s: no ID can be issued",
		                         static_cast<long long>(epoch_ms), layout_setting.name, spec,
		                         timestamptz_to_str(unix_ms_to_timestamptz(now_ms))),
		                  errdetail("%s", problem),
		                  errhint("If the system clock is wrong, correct it; IDs are issued once it is right. "
		                          "Otherwise choose a later snowflake.epoch, or a layout with more time bits or a "
		                          "longer unit, and restart.")));
	}
}

// Notes the values configured for the settings, before defining them turns them from placeholders.
void note_configured_values() {
	for (size_t i = 0; i < std::size(kSettings); ++i) {
		const char *value = GetConfigOption(kSettings[i], true, false);
		configured[i] = value != nullptr ? pstrdup(value) : nullptr;
	}
}

// Defining a setting only warns about a bad configured value and keeps the default, which would
// start the server with, say, no node ID. Checking each value again (without applying it) at
// ERROR level stops the server at start instead.
void enforce_configured_values() {
	for (size_t i = 0; i < std::size(kSettings); ++i)
		if (configured[i] != nullptr)
			(void)set_config_option(kSettings[i], configured[i], PGC_POSTMASTER, PGC_S_FILE, GUC_ACTION_SET, false,
			                        ERROR, false);
}

// Every setting's name, as "a, b and c".
const char *setting_names() {
	StringInfoData names;
	initStringInfo(&names);
	for (size_t i = 0; i < std::size(kSettings); ++i)
		appendStringInfo(&names, "%s%s", i == 0 ? "" : i + 1 == std::size(kSettings) ? " and " : ", ", kSettings[i]);
	return names.data;
}

// A line such as "snowflake.nod = 3" would leave the server without the node it was meant to have
// (reserving the prefix only warns and removes it): stops the start instead, naming the line.
// Call after defining every setting, so that any snowflake.* placeholder left is unknown.
void refuse_unknown_settings() {
	int count = 0;
	config_generic **settings = snowflake_guc_variables(count);
	for (int i = 0; i < count; ++i) {
		const config_generic &setting = *settings[i];
		if (!(setting.flags & GUC_CUSTOM_PLACEHOLDER) || strncmp(setting.name, "snowflake.", 10) != 0)
			continue;
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT),
		                errmsg("unrecognized configuration parameter \"%s\"", setting.name),
		                setting.sourcefile != nullptr
		                    ? errdetail("It is set in \"%s\", line %d, but snowflake has no such setting.",
		                                setting.sourcefile, setting.sourceline)
		                    : errdetail("It is set on the command line, but snowflake has no such setting."),
		                errhint("Correct or remove it. snowflake's settings are %s.", setting_names())));
	}
}

// Logs, once per server start, the settings every ID of this run is made with.
void log_settings_in_effect() {
	char spec[64];
	format_layout(layout_setting.layout, spec);
	const DerivedNode derived = derive_node();
	char origin[160];
	describe_node_origin(ConfiguredNode{derived.node, derived.problem, node_source_kind, derived.number}, origin);
	char node[256];
	if (derived.problem == NodeProblem::None)
		snprintf(node, sizeof(node), "node %d from %s", derived.node, origin);
	else if (derived.problem == NodeProblem::CitusPending)
		snprintf(node, sizeof(node), "node from the Citus group, read by the node check in database \"%s\"",
		         check_database);
	else
		snprintf(node, sizeof(node), "no node (%s)", node_problem_text(derived.problem));
	ereport(LOG, (errmsg("snowflake: %s, layout %s (%s), epoch %lld (%s), max_clock_drift %d ms, clock_policy %s",
	                     node, layout_setting.name, spec, static_cast<long long>(epoch_ms),
	                     timestamptz_to_str(unix_ms_to_timestamptz(epoch_ms)), max_clock_drift_ms,
	                     clock_policy_options[clock_policy_setting].name)));
}

} // namespace

// Defines the settings: when preloading, every one, then makes bad values fatal and logs those in
// effect; otherwise the reloadable ones, with the decoding epoch settled.
void define_settings(bool preloading) {
	define_mask_setting();
	if (!preloading) {
		define_reloadable_settings();
		settle_unpreloaded_epoch();
		return;
	}
	note_configured_values();
	define_startup_settings();
	define_reloadable_settings();
	refuse_unknown_settings();
	MarkGUCPrefixReserved("snowflake");
	enforce_configured_values();
	check_epoch_suits_layout();
	log_settings_in_effect();
}

void refuse_session_change(const VariableSetStmt &stmt) {
	if (stmt.name == nullptr || stmt.kind == VAR_SET_MULTI || strncmp(stmt.name, "snowflake.", 10) != 0)
		return;
	for (const char *name : kSettings) {
		if (strcmp(stmt.name, name) != 0)
			continue;
		if (std::find(std::begin(kRestartOnly), std::end(kRestartOnly), name) != std::end(kRestartOnly))
			ereport(ERROR, (errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
			                errmsg("parameter \"%s\" cannot be changed without restarting the server", name),
			                errhint("Set it in postgresql.conf (or with ALTER SYSTEM SET %s = ...) and restart the "
			                        "server; it holds for every session.",
			                        name)));
		ereport(ERROR, (errcode(ERRCODE_CANT_CHANGE_RUNTIME_PARAM),
		                errmsg("parameter \"%s\" cannot be changed now", name),
		                errhint("Set it in postgresql.conf (or with ALTER SYSTEM SET %s = ...) and reload the "
		                        "configuration with SELECT pg_reload_conf(); it holds for every session.",
		                        name)));
	}
}

} // namespace snowflake
