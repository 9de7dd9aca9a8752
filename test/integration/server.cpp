// The integration tests' Server (see server.hpp): initdb, pg_ctl and the log,
// through the shell, with every wait bounded by a timeout and driven by a
// condition (a connection succeeds, a log line appears), never a bare sleep.
#include "server.hpp"

#include <csignal>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace snowflake::test {
std::string pg_bin() {
	const char *bin = std::getenv("PG_BIN");
	return bin != nullptr ? bin : "/usr/lib/postgresql/15/bin";
}

std::string work_dir() {
	const char *dir = std::getenv("SNOWFLAKE_TEST_DIR");
	if (dir == nullptr)
		throw std::runtime_error("SNOWFLAKE_TEST_DIR is not set");
	return dir;
}

bool Server::crash_a_backend() const {
	using namespace std::chrono_literals;
	const std::string line = "all server processes terminated; reinitializing";
	// The crash restarts so far: this one is done when the log has one more.
	const auto restarts = [&] {
		const std::string text = log();
		int n = 0;
		for (size_t at = text.find(line); at != std::string::npos; at = text.find(line, at + 1))
			++n;
		return n;
	};
	const int before = restarts();
	{
		pqxx::connection victim = connect();
		if (::kill(victim.backendpid(), SIGKILL) != 0)
			return false;
	}
	return wait_until([&] { return restarts() > before; }, 10s) && wait_until_accepting(30s);
}

int64_t unix_ms() {
	return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

int run(const std::string &command) {
	const int status = std::system(command.c_str());
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

long long query_int(pqxx::connection &conn, const std::string &query) {
	pqxx::work tx{conn};
	const long long value = one_value<long long>(tx, query);
	tx.commit();
	return value;
}

long long max_of(pqxx::connection &conn, int n) {
	return query_int(conn, "SELECT max(snowflake_nextval()) FROM generate_series(1, " + std::to_string(n) + ")");
}

long long create_and_issue(const Server &server, int n) {
	pqxx::connection conn = server.connect();
	exec(conn, {"CREATE EXTENSION snowflake"});
	return max_of(conn, n);
}

void exec(pqxx::connection &conn, std::initializer_list<std::string> statements) {
	for (const std::string &sql : statements) {
		pqxx::work tx{conn};
		tx.exec(sql);
		tx.commit();
	}
}

std::string sqlstate_of(pqxx::connection &conn, const std::string &query) {
	try {
		exec(conn, {query});
		return "";
	} catch (const pqxx::insufficient_privilege &e) {
		// libpqxx 6.4 leaves it empty for this class; 8 returns a string_view.
		return e.sqlstate().empty() ? std::string("42501") : std::string(e.sqlstate());
	} catch (const pqxx::sql_error &e) {
		return std::string(e.sqlstate());
	}
}

std::string text_of(const Server &server, const std::string &query) {
	pqxx::connection conn = server.connect();
	pqxx::work tx{conn};
	return one_value<std::string>(tx, query);
}

bool a_whole_pass(const Server &server) {
	for (int i = 0; i < 2; ++i) {
		const std::string since = text_of(server, "SELECT clock_timestamp()::text");
		if (!wait_until([&] { return text_of(server, "SELECT coalesce(checked_at > '" + since + "', false)::text "
		                                             "FROM snowflake_node_status()") == "true"; },
		                std::chrono::seconds(20)))
			return false;
	}
	return true;
}

bool wait_until(const std::function<bool()> &check, std::chrono::milliseconds timeout) {
	const auto deadline = std::chrono::steady_clock::now() + timeout;
	do {
		if (check())
			return true;
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
	} while (std::chrono::steady_clock::now() < deadline);
	return false;
}

Server::Server(const std::string &name) : dir_(work_dir() + "/" + name), data_(dir_ + "/data") {
	if (run("rm -rf " + dir_ + " && mkdir -p " + dir_) != 0)
		throw std::runtime_error("could not make " + dir_);
}

Server::Server(const std::string &name, const std::vector<std::string> &conf_lines) : Server(name) {
	// --no-sync, as PostgreSQL's own test clusters: a test crashes servers, never the machine, and
	// initdb's flush is a third of its time.
	if (run(pg_bin() + "/initdb --no-sync -D " + data_ + " -A trust -U postgres >" + dir_ + "/initdb.log 2>&1") != 0)
		throw std::runtime_error("initdb failed for " + dir_);
	listen_here();
	for (const std::string &line : conf_lines)
		append_conf(line);
}

Server::Server(const std::string &name, StandbyOf standby_of) : Server(name) {
	// -c fast: the backup's checkpoint at once, where a spread one takes 14 s on an idle primary.
	if (run(pg_bin() + "/pg_basebackup -D " + data_ + " -R -X stream -c fast -h " + standby_of.primary.dir_ + " -U postgres >" +
	        dir_ + "/basebackup.log 2>&1") != 0)
		throw std::runtime_error("pg_basebackup failed for " + dir_);
	listen_here(); // the copied postgresql.conf names the primary's socket directory
}

Server::Server(const std::string &name, CloneOf clone_of) : Server(name) {
	if (run("cp -a " + clone_of.original.data_ + " " + data_) != 0)
		throw std::runtime_error("could not copy " + clone_of.original.data_);
	listen_here(); // the copied postgresql.conf names the original's socket directory
}

void Server::listen_here() {
	append_conf("listen_addresses = ''");
	append_conf("unix_socket_directories = '" + dir_ + "'");
}

Server::~Server() {
	if (running_)
		stop("immediate");
}

bool Server::start() {
	// A failed start leaves one already running still to stop (at the end of a test that failed).
	const bool started = run(pg_bin() + "/pg_ctl -D " + data_ + " -l " + dir_ + "/server.log -w -t 30 start >/dev/null") == 0;
	running_ = running_ || started;
	return started;
}

namespace {
// The whole of a text file; empty if it cannot be read.
std::string read_text(const std::string &path) {
	std::ifstream in(path);
	std::stringstream text;
	text << in.rdbuf();
	return text.str();
}

// libfaketime's preload library (Debian's libfaketime, under its multiarch directory).
std::string libfaketime() {
	for (const auto &entry : std::filesystem::directory_iterator("/usr/lib"))
		if (const auto lib = entry.path() / "faketime/libfaketime.so.1"; std::filesystem::exists(lib))
			return lib.string();
	throw std::runtime_error("libfaketime is not installed (Debian's package libfaketime)");
}
} // namespace

bool Server::start_with_clock(int offset_s) {
	const std::string offset = (offset_s >= 0 ? "+" : "") + std::to_string(offset_s);
	const bool started = run("LD_PRELOAD=" + libfaketime() + " FAKETIME=" + offset + " FAKETIME_DONT_FAKE_MONOTONIC=1 " +
	                         pg_bin() + "/pg_ctl -D " + data_ + " -l " + dir_ + "/server.log -w -t 30 start >/dev/null") == 0;
	running_ = running_ || started;
	return started;
}

void Server::stop(const char *mode) {
	run(pg_bin() + "/pg_ctl -D " + data_ + " -m " + mode + " -w stop >/dev/null 2>&1");
	running_ = false;
}

void Server::append_conf(const std::string &line) {
	std::ofstream(data_ + "/postgresql.conf", std::ios::app) << line << '\n';
}

void Server::reload() {
	run(pg_bin() + "/pg_ctl -D " + data_ + " reload >/dev/null");
}

bool Server::promote() {
	return run(pg_bin() + "/pg_ctl -D " + data_ + " -w -t 30 promote >/dev/null") == 0;
}

int Server::postmaster_pid() const {
	int pid = 0;
	std::ifstream(data_ + "/postmaster.pid") >> pid;
	return pid;
}

std::string Server::data_file(const std::string &name) const {
	return data_ + "/" + name;
}

std::string Server::conninfo() const {
	return "host=" + dir_ + " dbname=postgres user=postgres";
}

pqxx::connection Server::connect() const {
	return pqxx::connection{conninfo()};
}

bool Server::wait_until_accepting(std::chrono::milliseconds timeout) const {
	return wait_until(
	    [&] {
		    try {
			    pqxx::connection conn = connect();
			    return true;
		    } catch (const pqxx::broken_connection &) {
			    return false;
		    }
	    },
	    timeout);
}

bool Server::wait_for_setting(const std::string &name, const std::string &value) const {
	return wait_until(
	    [&] {
		    pqxx::connection conn = connect();
		    pqxx::work tx{conn};
		    return one_value<std::string>(tx, "SHOW " + name) == value;
	    },
	    std::chrono::seconds(10));
}

bool Server::wait_for_log(const std::string &text, std::chrono::milliseconds timeout) const {
	return wait_until([&] { return log().find(text) != std::string::npos; }, timeout);
}

std::string Server::log() const {
	return read_text(dir_ + "/server.log");
}

std::string Server::single_user(const std::string &statements) const {
	std::ofstream(dir_ + "/single.sql") << statements << "\n";
	(void)run(pg_bin() + "/postgres --single -D " + data_ + " postgres <" + dir_ + "/single.sql >" + dir_ +
	          "/single.out 2>&1");
	return read_text(dir_ + "/single.out");
}

std::string keep_a_copy_of_the_state_file(Server &server) {
	server.stop();
	const std::string copy = server.data_file("snowflake.state.old");
	std::filesystem::copy_file(server.data_file("snowflake.state"), copy, std::filesystem::copy_options::overwrite_existing);
	if (!server.start())
		throw std::runtime_error("the server did not start again after its file was copied");
	return copy;
}

void reservation_passed_then_checkpoint(pqxx::connection &conn) {
	if (!wait_until(
	        [&] {
		        return query_int(conn, "SELECT (coalesce(s.last_id_time < clock_timestamp() - 2 * r.lead_ms * interval '1 ms', true) "
		                               "AND coalesce(s.reserved_until < clock_timestamp(), true))::int FROM snowflake_stats() s, "
		                               "snowflake_reservation() r") == 1;
	        },
	        std::chrono::seconds(30)))
		throw std::runtime_error("the reservation did not pass within 30 s");
	exec(conn, {"CHECKPOINT"});
}

long long lowest_after_raising_the_bound(const Server &server, pqxx::connection &conn, int n) {
	{
		pqxx::nontransaction outside{conn};
		outside.exec("ALTER SYSTEM SET snowflake.max_clock_drift = '1min'");
		outside.exec("SELECT pg_reload_conf()");
	}
	if (!server.wait_for_setting("snowflake.max_clock_drift", "1min"))
		throw std::runtime_error("the server did not take snowflake.max_clock_drift = '1min'");
	return query_int(conn, "SELECT min(snowflake_nextval()) FROM generate_series(1, " + std::to_string(n) + ")");
}

int occurrences(const std::string &haystack, const std::string &text) {
	int n = 0;
	for (size_t at = haystack.find(text); at != std::string::npos; at = haystack.find(text, at + 1))
		++n;
	return n;
}

void pg_upgrade(const Server &from, const Server &to) {
	const std::string work = to.socket_dir() + "/pg_upgrade";
	const std::string command = "mkdir -p " + work + " && cd " + work + " && " + pg_bin() + "/pg_upgrade -b " +
	                            pg_bin() + " -B " + pg_bin() + " -d " + from.data_file(".") + " -D " +
	                            to.data_file(".") + " -s " + work + " -p 26596 -P 26597 >" + work + "/pg_upgrade.log 2>&1";
	if (run(command) != 0)
		throw std::runtime_error("pg_upgrade failed: see " + work + "/pg_upgrade.log");
}

} // namespace snowflake::test
