// Reading and writing $PGDATA/snowflake.state (see state_file.hpp for what it
// holds, how and why): a fixed-size image with a magic number, a version (3;
// versions 1 and 2, from 0.1.0 and 0.2.0, are still read) and a CRC-32C,
// written in place with one fsync, or created aside and moved into place with
// durable_rename when there is none.
#include "state_file.hpp"

#include "pg_boundary.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace snowflake {
namespace {

constexpr uint32_t kMagic = 0x46574e53; // "SNWF"
constexpr const char *kTempFile = "snowflake.state.tmp";
constexpr const char *kControlFile = "global/pg_control"; // PostgreSQL's XLOG_CONTROL_FILE, the same in every version

// The bytes 0.1.0 wrote (version 1): every field explicit, padding zeroed, the CRC over all
// before it. The layout was always twitter's, so it has no unit; reserved_ms is in ms.
struct ImageV1 {
	uint32_t magic;
	uint32_t version;
	int64_t epoch_ms;
	int32_t time_bits;
	int32_t node_bits;
	int32_t seq_bits;
	uint32_t timeline;
	int64_t reserved_ms;
	pg_crc32c crc;
	uint32_t zero2;
};
static_assert(sizeof(ImageV1) == 48, "the version 1 image has no hidden padding");

// The bytes 0.2.0 wrote (version 2): version 1's fields, then the unit, reserved_tick in ticks.
struct ImageV2 {
	uint32_t magic;
	uint32_t version;
	int64_t epoch_ms;
	int32_t time_bits;
	int32_t node_bits;
	int32_t seq_bits;
	uint32_t timeline;
	int64_t reserved_tick;
	int32_t unit_ms;
	uint32_t zero1;
	pg_crc32c crc;
	uint32_t zero2;
};
static_assert(sizeof(ImageV2) == 56, "the version 2 image has no hidden padding");

// The bytes on disk since version 3: version 2's fields, then who wrote it and how fast it writes.
struct Image {
	uint32_t magic;
	uint32_t version;
	int64_t epoch_ms;
	int32_t time_bits;
	int32_t node_bits;
	int32_t seq_bits;
	uint32_t timeline;
	int64_t reserved_tick;
	int32_t unit_ms;
	uint32_t exit_mark; // 0.4.0 and older wrote 0 here and never read it: a file it writes has no mark
	uint64_t system_identifier;
	int64_t write_latency_us;
	pg_crc32c crc;
	uint32_t zero2;
};
static_assert(sizeof(Image) == 72, "the image has no hidden padding");
static_assert(sizeof(Image) <= 512, "the image fits in one sector, written in place as one write");

// The CRC-32C of the first length bytes of an image, which end where its crc field starts.
pg_crc32c image_crc(const void *image, size_t length) {
	pg_crc32c crc;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, image, length);
	FIN_CRC32C(crc);
	return crc;
}

// What is wrong with a record whose CRC matched (a crafted file), as a sentence, or nullptr if
// nothing: every field must be one the generator could have written.
const char *record_problem(const StateRecord &record) {
	if (const char *problem = layout_problem(record.layout))
		return problem;
	if (record.epoch_ms < 0 || record.epoch_ms > kMaxEpochMs)
		return "Its epoch is outside 1970 to 9999.";
	if (record.reserved_tick < 0 || record.reserved_tick > record.layout.max_time())
		return "Its reservation lies outside the layout's time field.";
	if (record.write_latency_us < 0 || record.write_latency_us > kMaxWriteLatencyUs)
		return "Its write latency is outside 0 to 10 s.";
	return nullptr;
}

// The image of type T in got bytes of buffer, if it is whole and its CRC matches.
template <typename T>
bool whole_image(const unsigned char *buffer, ssize_t got, T &image) {
	if (got != static_cast<ssize_t>(sizeof(T)))
		return false;
	std::memcpy(&image, buffer, sizeof(T));
	return EQ_CRC32C(image.crc, image_crc(&image, offsetof(T, crc)));
}

// The record in got bytes of buffer, if they are a whole, valid image of version 1, 2 or 3.
bool decode_image(const unsigned char *buffer, ssize_t got, StateRecord &record) {
	uint32_t head[2];
	if (got < static_cast<ssize_t>(sizeof(head)))
		return false;
	std::memcpy(head, buffer, sizeof(head));
	if (head[0] != kMagic)
		return false;
	if (ImageV1 v1; head[1] == 1 && whole_image(buffer, got, v1)) {
		record = StateRecord{v1.epoch_ms, Layout{v1.time_bits, v1.node_bits, v1.seq_bits, 1}, v1.reserved_ms,
		                     v1.timeline, 0, 0, 1, 0};
		return true;
	}
	if (ImageV2 v2; head[1] == 2 && whole_image(buffer, got, v2)) {
		record = StateRecord{v2.epoch_ms, Layout{v2.time_bits, v2.node_bits, v2.seq_bits, v2.unit_ms},
		                     v2.reserved_tick, v2.timeline, 0, 0, 2, 0};
		return true;
	}
	if (Image v3; head[1] == kStateVersion && whole_image(buffer, got, v3)) {
		record = StateRecord{v3.epoch_ms, Layout{v3.time_bits, v3.node_bits, v3.seq_bits, v3.unit_ms},
		                     v3.reserved_tick, v3.timeline, v3.system_identifier, v3.write_latency_us, 3, v3.exit_mark};
		return true;
	}
	return false;
}

// Notes errno as why a write failed, where the caller asked to know (failed_errno not null).
void note_errno(int *failed_errno) {
	if (failed_errno != nullptr)
		*failed_errno = errno;
}

// Closes fd, keeping errno as the failure before it set it (a close after a failed write or fsync).
void close_keeping_errno(int fd) {
	const int saved = errno;
	close(fd);
	errno = saved;
}

// Reports a failed step of creating the file at elevel, errno (saved first where the caller asked
// for it) naming why; removes the file written aside when there is one. Returns false.
bool creation_failed(int elevel, int *failed_errno, const char *what, const char *path, const char *aside) {
	const int saved = errno;
	note_errno(failed_errno);
	if (aside != nullptr)
		(void)unlink(aside);
	errno = saved;
	ereport(elevel, (errcode_for_file_access(), errmsg("could not %s \"%s\": %m", what, path)));
	return false;
}

// Creates the file from image, replacing a file of an older version: written aside in the same
// directory (a new file, never through a link planted there), fsynced, renamed into place, and the
// directory fsynced. Where the file's name is a symbolic link (the file kept on another volume), the
// file it leads to is replaced, in its own directory, and the link stays.
bool create_state(const Image &image, int elevel, int *failed_errno) {
	char path[PATH_MAX] = {}; // realpath() writes up to PATH_MAX bytes
	char target[1024];
	if (state_file_link(target)) {
		if (realpath(kStateFile, path) == nullptr)
			return creation_failed(elevel, failed_errno, "resolve the link", kStateFile, nullptr);
	} else {
		strlcpy(path, kStateFile, sizeof(path));
	}
	char dir[PATH_MAX];
	strlcpy(dir, path, sizeof(dir));
	get_parent_directory(dir);
	char aside[PATH_MAX + 32];
	if (dir[0] == '\0') { // the data directory, every server process's working directory
		strlcpy(dir, ".", sizeof(dir));
		strlcpy(aside, kTempFile, sizeof(aside));
	} else {
		snprintf(aside, sizeof(aside), "%s/%s", dir, kTempFile);
	}
	constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | PG_BINARY;
	int fd = open(aside, kFlags, pg_file_create_mode);
	if (fd < 0 && errno == EEXIST && unlink(aside) == 0) // left by a write that did not finish
		fd = open(aside, kFlags, pg_file_create_mode);
	if (fd < 0)
		return creation_failed(elevel, failed_errno, "create file", aside, nullptr);
	errno = 0;
	if (write(fd, &image, sizeof(image)) != static_cast<ssize_t>(sizeof(image))) {
		if (errno == 0)
			errno = ENOSPC; // a short write without errno means a full disk
		close_keeping_errno(fd);
		return creation_failed(elevel, failed_errno, "write file", aside, aside);
	}
	if (pg_fsync(fd) != 0) {
		close_keeping_errno(fd);
		return creation_failed(elevel, failed_errno, "fsync file", aside, aside);
	}
	if (close(fd) != 0)
		return creation_failed(elevel, failed_errno, "close file", aside, aside);
	if (rename(aside, path) != 0) {
		const int saved = errno;
		note_errno(failed_errno);
		(void)unlink(aside);
		errno = saved;
		ereport(elevel, (errcode_for_file_access(), errmsg("could not rename file \"%s\" to \"%s\": %m", aside, path)));
		return false;
	}
	const int dir_fd = open(dir, O_RDONLY | PG_BINARY, 0);
	if (dir_fd < 0)
		return creation_failed(elevel, failed_errno, "open directory", dir, nullptr);
	if (pg_fsync(dir_fd) != 0) {
		close_keeping_errno(dir_fd);
		return creation_failed(elevel, failed_errno, "fsync directory", dir, nullptr);
	}
	close(dir_fd);
	return true;
}

} // namespace

StateRead read_state(StateRecord &record) {
	const int fd = open(kStateFile, O_RDONLY | PG_BINARY, 0);
	if (fd < 0) {
		char target[1024];
		if (errno == ENOENT && !state_file_link(target))
			return StateRead::Missing;
		const int open_errno = errno;
		if (open_errno == ENOENT)
			ereport(LOG, (errmsg("snowflake: could not open \"%s\": it is a symbolic link to \"%s\", which does not "
			                     "exist",
			                     kStateFile, target)));
		else
			ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not open \"%s\": %m", kStateFile)));
		errno = open_errno;
		return StateRead::Unreadable;
	}
	unsigned char buffer[sizeof(Image) + 1]; // one byte more than any image, to see a longer file
	const ssize_t got = read(fd, buffer, sizeof(buffer));
	const int read_errno = errno;
	close(fd);
	if (got < 0) {
		errno = read_errno;
		ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not read \"%s\": %m", kStateFile)));
		return StateRead::Unreadable;
	}
	if (!decode_image(buffer, got, record)) {
		ereport(LOG, (errmsg("snowflake: \"%s\" is not a valid snowflake state record", kStateFile)));
		return StateRead::Corrupt;
	}
	if (const char *problem = record_problem(record)) {
		ereport(LOG, (errmsg("snowflake: \"%s\" is not a valid snowflake state record", kStateFile),
		              errdetail("%s", problem)));
		return StateRead::Corrupt;
	}
	return StateRead::Loaded;
}

bool write_state(const StateRecord &record, int elevel, int *failed_errno) {
	Image image;
	std::memset(&image, 0, sizeof(image));
	image.magic = kMagic;
	image.version = kStateVersion;
	image.epoch_ms = record.epoch_ms;
	image.time_bits = record.layout.time_bits;
	image.node_bits = record.layout.node_bits;
	image.seq_bits = record.layout.seq_bits;
	image.unit_ms = record.layout.unit_ms;
	image.reserved_tick = record.reserved_tick;
	image.timeline = record.timeline;
	image.system_identifier = record.system_identifier;
	image.write_latency_us = record.write_latency_us;
	image.exit_mark = record.exit_mark;
	image.crc = image_crc(&image, offsetof(Image, crc));

	const int fd = open(kStateFile, O_RDWR | PG_BINARY, 0);
	if (fd < 0) {
		const int open_errno = errno;
		char target[1024];
		if (open_errno == ENOENT && !state_file_link(target)) // a link to nothing is never replaced
			return create_state(image, elevel, failed_errno);
		errno = open_errno;
		note_errno(failed_errno);
		ereport(elevel, (errcode_for_file_access(), errmsg("could not open file \"%s\": %m", kStateFile)));
		return false;
	}
	// Only an image of this size is overwritten in place (one write, the size unchanged); an older
	// version's, shorter, is replaced whole, aside and renamed.
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size != static_cast<off_t>(sizeof(image))) {
		close(fd);
		return create_state(image, elevel, failed_errno);
	}
	// One write inside the first sector, then one fsync: the record is replaced whole or not at all.
	errno = 0;
	if (pwrite(fd, &image, sizeof(image), 0) != static_cast<ssize_t>(sizeof(image))) {
		if (errno == 0)
			errno = ENOSPC;
		close_keeping_errno(fd);
		note_errno(failed_errno);
		ereport(elevel, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", kStateFile)));
		return false;
	}
	if (pg_fsync(fd) != 0) {
		close_keeping_errno(fd);
		note_errno(failed_errno);
		// Nothing counts on this write: the next one rewrites the whole record and fsyncs it again.
		ereport(elevel, (errcode_for_file_access(), errmsg("could not fsync file \"%s\": %m", kStateFile)));
		return false;
	}
	if (close(fd) != 0) {
		note_errno(failed_errno);
		ereport(elevel, (errcode_for_file_access(), errmsg("could not close file \"%s\": %m", kStateFile)));
		return false;
	}
	return true;
}

bool read_control(ControlFacts &facts) {
	ControlFileData control;
	const int fd = open(kControlFile, O_RDONLY | PG_BINARY, 0);
	if (fd < 0)
		return false;
	const bool whole = read(fd, &control, sizeof(control)) == static_cast<ssize_t>(sizeof(control));
	close(fd);
	if (!whole || !EQ_CRC32C(control.crc, image_crc(&control, offsetof(ControlFileData, crc))))
		return false;
	// A stop during recovery ("shut down in recovery": a standby's, or one in the middle of crash
	// recovery) is not a primary's clean shutdown: IDs may have been issued after its checkpoint.
	facts.clean_shutdown = control.state == DB_SHUTDOWNED;
	facts.checkpoint_unix_s = control.checkPointCopy.time;
	// initdb leaves the OID counter below FirstNormalObjectId; the first object a user creates (such as
	// the extension itself, without which no ID is issued) moves it there for good.
	facts.objects_created = control.checkPointCopy.nextOid >= FirstNormalObjectId;
	const struct {
		uint64_t lsn;
		int64_t time;
		uint64_t system_identifier;
	} checkpoint{control.checkPoint, control.checkPointCopy.time, control.system_identifier};
	facts.checkpoint_mark = image_crc(&checkpoint, sizeof(checkpoint));
	if (facts.checkpoint_mark == 0)
		facts.checkpoint_mark = 1;
	return true;
}

bool state_file_link(char (&target)[1024]) {
	const ssize_t length = readlink(kStateFile, target, sizeof(target) - 1);
	if (length < 0)
		return false;
	target[length] = '\0';
	return true;
}

} // namespace snowflake
