// What the node check calls this server, and what tells a copy of it from the
// server itself (copies.hpp): the identity, the identity file a clone takes,
// the heartbeats this server wrote and first saw on its cluster's claims, and
// the reading of its cluster's claims that finds a copy.
#include "copies.hpp"

#include "claims_log.hpp"

#include <algorithm>
#include <fcntl.h>
#include <unistd.h>

namespace snowflake {
namespace {

constexpr const char *kIdentityFile = "snowflake.identity";
constexpr const char *kIdentityAside = "snowflake.identity.new";

// The identity file as this process read or wrote it: read once; taken is 0 while it names none.
struct IdentityFile {
	bool read;
	uint64_t taken;   // the system identifier this server took as a clone
	char copy_of[64]; // the identity it was a copy of
};
IdentityFile identity_file{};

// Reads the identity file once a process: a file of another cluster (copied in by hand) or a damaged
// one is logged and ignored, so the server goes by its cluster's identity.
void read_identity_file(uint64_t cluster) {
	if (identity_file.read)
		return;
	identity_file.read = true;
	const int fd = open(kIdentityFile, O_RDONLY | PG_BINARY, 0);
	if (fd < 0) {
		if (errno != ENOENT)
			ereport(WARNING, (errcode_for_file_access(), errmsg("snowflake: could not open \"%s\": %m", kIdentityFile)));
		return;
	}
	char text[256];
	const ssize_t got = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[std::max<ssize_t>(got, 0)] = '\0';
	unsigned long long of = 0, taken = 0;
	char copy[64];
	if (sscanf(text, "snowflake identity 1\ncluster %llu\nsystem_identifier %llu\ncopy_of %63s", &of, &taken, copy) != 3 ||
	    taken == 0 || taken >= (uint64_t{1} << 32)) {
		ereport(WARNING, (errmsg("snowflake: \"%s\" is damaged; the node check goes by the cluster's identity",
		                         kIdentityFile)));
		return;
	}
	if (of != cluster) {
		ereport(WARNING, (errmsg("snowflake: \"%s\" belongs to another cluster (system identifier %llu); the node "
		                         "check goes by this cluster's identity",
		                         kIdentityFile, of)));
		return;
	}
	identity_file.taken = taken;
	strlcpy(identity_file.copy_of, copy, sizeof(identity_file.copy_of));
}

// What tells a copy of this server from the server itself, kept across passes: the heartbeat this
// server last wrote on its own claim, and the heartbeats first seen here on the claims of its cluster's
// earlier timelines (its own past, until one is written again: then its original still runs).
char own_heartbeat[48];
char written_heartbeat[48]; // this pass's, made own_heartbeat once the pass commits
struct PastClaim {
	int32_t timeline;
	char heartbeat[48];
};
PastClaim past_claims[8];
int past_count = 0;

} // namespace

Self self_of(SharedState &state) {
	Self self{};
	char host[128];
	if (gethostname(host, sizeof(host)) != 0)
		strlcpy(host, "localhost", sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(self.server, sizeof(self.server), "%s:%d", host, PostPortNumber);
	read_identity_file(state.system_identifier);
	snprintf(self.system_identifier, sizeof(self.system_identifier), "%llu",
	         static_cast<unsigned long long>(identity_file.taken != 0 ? identity_file.taken : state.system_identifier));
	self.timeline = static_cast<int32_t>(GetWALInsertionTimeLine());
	snprintf(self.identity, sizeof(self.identity), "%s:%d", self.system_identifier, self.timeline);
	return self;
}

const char *copy_of() noexcept {
	return identity_file.taken != 0 ? identity_file.copy_of : "";
}

int64_t own_claim_started_us(const Self &self) {
	const char *query = "SELECT " SNOWFLAKE_CLAIM_US("started_at") ", " SNOWFLAKE_CLAIM_US("heartbeat") " FROM "
	                    "snowflake_node_check.claims WHERE system_identifier OPERATOR(pg_catalog.=) $1 AND "
	                    "timeline OPERATOR(pg_catalog.=) $2";
	Oid types[2] = {TEXTOID, INT4OID};
	Datum values[2] = {CStringGetTextDatum(self.system_identifier), Int32GetDatum(self.timeline)};
	int64_t started = INT64_MAX;
	written_heartbeat[0] = '\0';
	if (SPI_execute_with_args(query, 2, types, values, nullptr, false, 1) != SPI_OK_SELECT || SPI_processed == 0)
		return INT64_MAX;
	strlcpy(written_heartbeat, spi_text(0, 2), sizeof(written_heartbeat));
	return parse_claim_number(spi_text(0, 1), started) ? started : INT64_MAX;
}

void own_claim_committed() noexcept {
	strlcpy(own_heartbeat, written_heartbeat, sizeof(own_heartbeat));
}

bool copy_found(const Self &self, int32_t node, char (&copy)[192], char (&identity)[64]) {
	const char *query = "SELECT timeline, " SNOWFLAKE_CLAIM_US("heartbeat") ", server, node::pg_catalog.text, "
	                    SNOWFLAKE_CLAIM_US("started_at") " FROM snowflake_node_check.claims "
	                    "WHERE system_identifier OPERATOR(pg_catalog.=) $1";
	Oid types[1] = {TEXTOID};
	Datum values[1] = {CStringGetTextDatum(self.system_identifier)};
	if (SPI_execute_with_args(query, 1, types, values, nullptr, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "snowflake: the node check could not read its own claims");
	for (uint64 r = 0; r < SPI_processed; ++r) {
		const int i = static_cast<int>(r);
		const int32_t timeline = static_cast<int32_t>(strtol(spi_text(i, 1), nullptr, 10));
		const char *heartbeat = spi_text(i, 2);
		snprintf(identity, sizeof(identity), "%s:%d", self.system_identifier, timeline);
		ClaimValues claim;
		if (!believed(ClaimText{spi_text(i, 3), identity, spi_text(i, 4), spi_text(i, 5), heartbeat}, claim))
			continue; // no server's check wrote it: it tells nothing of a copy
		const bool here = claim.node == node;
		char server[2 * kClaimServerMax];
		escape_claim_text(spi_text(i, 3), server, sizeof(server));
		if (timeline > self.timeline) {
			if (!here)
				continue;
			snprintf(copy, sizeof(copy), "%s (%s:%d), a promoted copy of this server", server, self.system_identifier,
			         timeline);
			return true;
		}
		if (timeline == self.timeline) { // on any node: the two write one claim, each under its own node
			if (own_heartbeat[0] != '\0' && strcmp(heartbeat, own_heartbeat) != 0) {
				snprintf(copy, sizeof(copy), "%s (%s), a copy of this server on its timeline", server, self.identity);
				return true;
			}
			continue;
		}
		PastClaim *past = std::find_if(past_claims, past_claims + past_count,
		                               [timeline](const PastClaim &p) { return p.timeline == timeline; });
		if (past == past_claims + past_count) {
			if (past_count < static_cast<int>(lengthof(past_claims))) {
				past->timeline = timeline;
				strlcpy(past->heartbeat, heartbeat, sizeof(past->heartbeat));
				++past_count;
			}
		} else if (here && strcmp(past->heartbeat, heartbeat) != 0) {
			snprintf(copy, sizeof(copy), "%s (%s:%d), the original this server was promoted from, still running",
			         server, self.system_identifier, timeline);
			return true;
		}
	}
	return false;
}

void take_identity_of_own(SharedState &state, Self &self) {
	const unsigned long long former = strtoull(self.system_identifier, nullptr, 10);
	uint32 random = 0;
	while (random == 0 || random == former)
		if (!pg_strong_random(&random, sizeof(random)))
			elog(ERROR, "snowflake: no random number for an identity of this server's own");
	char text[256];
	const int length = snprintf(text, sizeof(text), "snowflake identity 1\ncluster %llu\nsystem_identifier %u\n"
	                            "copy_of %s\n",
	                            static_cast<unsigned long long>(state.system_identifier), random, self.identity);
	const int fd = open(kIdentityAside, O_CREAT | O_TRUNC | O_WRONLY | PG_BINARY, pg_file_create_mode);
	int failed = fd < 0 ? errno : 0;
	if (fd >= 0) {
		errno = 0;
		if (write(fd, text, static_cast<size_t>(length)) != length)
			failed = errno != 0 ? errno : ENOSPC; // a short write
		else if (pg_fsync(fd) != 0)
			failed = errno;
		close(fd);
	}
	if (failed != 0) {
		errno = failed;
		ereport(ERROR, (errcode_for_file_access(),
		                errmsg("snowflake: this server is a clone of %s and could not take an identity of its own: "
		                       "could not write \"%s\": %m",
		                       self.identity, kIdentityAside)));
	}
	if (durable_rename(kIdentityAside, kIdentityFile, LOG) != 0)
		ereport(ERROR, (errmsg("snowflake: this server is a clone of %s and could not take an identity of its own: "
		                       "could not rename \"%s\" to \"%s\" (the log says why)",
		                       self.identity, kIdentityAside, kIdentityFile)));
	ereport(WARNING, (errmsg("snowflake: another server wrote this server's claim (%s): it is a copy of this "
	                         "server's data directory; this server takes an identity of its own, %u:%d",
	                         self.identity, random, self.timeline),
	                  errdetail("The identity is kept in \"%s\" in the data directory.", kIdentityFile)));
	identity_file.taken = random;
	strlcpy(identity_file.copy_of, self.identity, sizeof(identity_file.copy_of));
	own_heartbeat[0] = '\0';
	past_count = 0;
	self = self_of(state);
}

} // namespace snowflake
