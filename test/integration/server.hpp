// A real PostgreSQL server for the integration tests: created with initdb in
// its own directory under the suite's work directory, configured with extra
// postgresql.conf lines, reached over a Unix socket only, and driven with
// pg_ctl (start, stop, reload) or signals (kill -9). The tests run as the
// postgres system user; PG_BIN names the server's bin directory.
#pragma once

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace snowflake::test {

class Server {
public:
	// Creates the data directory (replacing any from an earlier run) with these conf lines.
	Server(const std::string &name, const std::vector<std::string> &conf_lines);
	// Creates a streaming standby of a running primary with pg_basebackup.
	struct StandbyOf {
		const Server &primary;
	};
	Server(const std::string &name, StandbyOf standby_of);
	// Creates a clone of a stopped server: its data directory copied whole (cp -a), so the two share
	// the system identifier and the timeline.
	struct CloneOf {
		const Server &original;
	};
	Server(const std::string &name, CloneOf clone_of);
	~Server();
	Server(const Server &) = delete;
	Server &operator=(const Server &) = delete;

	// Starts the server and waits until it accepts connections; false if it would not start.
	bool start();
	// The same with the system clock of every process of the server moved by offset_s seconds
	// (libfaketime; negative: behind), as on a machine whose clock is wrong.
	bool start_with_clock(int offset_s);
	// Stops the server with pg_ctl's mode (fast, immediate).
	void stop(const char *mode = "fast");
	// Appends a line to postgresql.conf.
	void append_conf(const std::string &line);
	// Asks the server to reload its configuration (pg_ctl reload).
	void reload();
	// Promotes a standby and waits until it is a primary; false if that failed.
	bool promote();
	// The postmaster's process ID, from postmaster.pid.
	int postmaster_pid() const;
	// A file in the data directory.
	std::string data_file(const std::string &name) const;

	// The directory holding the server's Unix socket.
	const std::string &socket_dir() const {
		return dir_;
	}
	// The libpq connection string of the postgres database, as superuser postgres.
	std::string conninfo() const;
	// A new connection to the postgres database; throws if the server is down.
	pqxx::connection connect() const;
	// Waits until a new connection succeeds, up to timeout; false if none did.
	bool wait_until_accepting(std::chrono::milliseconds timeout) const;
	// Waits until a new connection's SHOW name gives value (the postmaster has reloaded), up to 10 s;
	// false if it never did.
	bool wait_for_setting(const std::string &name, const std::string &value) const;
	// Waits until the server log contains text, up to timeout; false if it never did.
	bool wait_for_log(const std::string &text, std::chrono::milliseconds timeout) const;
	// The server log so far.
	std::string log() const;
	// Runs statements (one a line) in a single-user backend (postgres --single) of this server,
	// which must be stopped; what the backend printed, its errors included.
	std::string single_user(const std::string &statements) const;
	// Kills a new backend with SIGKILL and waits until the postmaster has reinitialised shared
	// memory (once more than before) and accepts connections again; false if it did not within 40 s.
	bool crash_a_backend() const;

private:
	// Makes an empty directory for a server called name.
	explicit Server(const std::string &name);
	// Sets this server's socket directory, reached only through it.
	void listen_here();

	std::string dir_;  // this server's directory: data/, the socket and server.log
	std::string data_; // the data directory
	bool running_ = false;
};

// The postgresql.conf line that preloads snowflake.
inline const std::string kPreload = "shared_preload_libraries = 'snowflake'";

// Wall-clock Unix milliseconds, to bracket the times IDs decode to.
int64_t unix_ms();

// Runs a shell command; returns its exit status.
int run(const std::string &command);

// The directory holding the server's programs (initdb, pg_ctl, pg_dump): PG_BIN.
std::string pg_bin();

// The directory the suite works in: SNOWFLAKE_TEST_DIR.
std::string work_dir();

// The one value query returns (one row, first column) as T; throws unless there is exactly one row.
// (libpqxx 7.10 deprecates exec1(); this reads the same on 6.4 and 7.x.)
template <typename T> T one_value(pqxx::transaction_base &tx, const std::string &query) {
	const pqxx::result rows = tx.exec(query);
	if (rows.size() != 1)
		throw std::runtime_error(std::to_string(rows.size()) + " rows instead of one from: " + query);
	return rows[0][0].as<T>();
}

// The first column of the first row of query, on a new transaction of conn.
long long query_int(pqxx::connection &conn, const std::string &query);

// The largest of n new IDs, drawn on conn in one statement.
long long max_of(pqxx::connection &conn, int n);

// Creates the extension on a server just started, and returns the largest of n first IDs.
long long create_and_issue(const Server &server, int n);

// Runs statements on conn, each in its own transaction.
void exec(pqxx::connection &conn, std::initializer_list<std::string> statements);

// The SQLSTATE query fails with on conn, or "" when it succeeds.
std::string sqlstate_of(pqxx::connection &conn, const std::string &query);

// Polls until check() is true, up to timeout; whether it became true.
bool wait_until(const std::function<bool()> &check, std::chrono::milliseconds timeout);

// Stops server cleanly, copies its snowflake.state aside (a backup a test later puts back), starts it
// again, and returns the copy's path; an error if it would not start.
std::string keep_a_copy_of_the_state_file(Server &server);

// Waits (up to 30 s) until the reservation is behind the clock, then runs CHECKPOINT: crash recovery
// then replays no reservation (wal.hpp), and only snowflake.state knows the last one.
void reservation_passed_then_checkpoint(pqxx::connection &conn);

// Raises snowflake.max_clock_drift on server to 1 min and reloads, so that a clock behind the floor
// borrows over it; then the smallest of n new IDs on conn (an error if the server did not take it).
long long lowest_after_raising_the_bound(const Server &server, pqxx::connection &conn, int n);

// Runs pg_upgrade from the stopped server from into the new, never started server to (its ports'
// sockets in a directory of to's own); an error naming the log when it fails.
void pg_upgrade(const Server &from, const Server &to);

// A text value of one row and column, as postgres in database postgres.
std::string text_of(const Server &server, const std::string &query);

// Waits until at least one whole pass of the node check has run since the call; false if none did in 20 s.
bool a_whole_pass(const Server &server);

// How often text occurs in haystack (a server log, say).
int occurrences(const std::string &haystack, const std::string &text);

} // namespace snowflake::test
