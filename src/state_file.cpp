// Reading and writing $PGDATA/snowflake.state (see state_file.hpp for what it
// holds and why it is a file): a fixed-size image with a magic number, a
// version (2; version 1 files from 0.1.0 are still read, as the twitter layout)
// and a CRC-32C, written aside and moved into place with
// durable_rename, so it is replaced atomically and survives a crash.
#include "state_file.hpp"

#include "pg_boundary.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

extern "C" {
#include "catalog/pg_control.h"
#include "common/file_perm.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
}

namespace snowflake {
namespace {

constexpr uint32_t kMagic = 0x46574e53; // "SNWF"
constexpr uint32_t kVersion = 2;         // written since 0.2.0; version 1 (0.1.0) is still read
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

// The bytes on disk since version 2: version 1's fields, then the unit, reserved_tick in ticks.
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
	uint32_t zero1;
	pg_crc32c crc;
	uint32_t zero2;
};
static_assert(sizeof(Image) == 56, "the image has no hidden padding");

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
	if (record.timeline == 0)
		return "Its timeline is 0.";
	return nullptr;
}

// The record in got bytes of buffer, if they are a whole, valid image of version 1 or 2.
bool decode_image(const unsigned char *buffer, ssize_t got, StateRecord &record) {
	uint32_t head[2];
	if (got < static_cast<ssize_t>(sizeof(head)))
		return false;
	std::memcpy(head, buffer, sizeof(head));
	if (head[0] != kMagic)
		return false;
	if (head[1] == 1 && got == static_cast<ssize_t>(sizeof(ImageV1))) {
		ImageV1 v1;
		std::memcpy(&v1, buffer, sizeof(v1));
		if (!EQ_CRC32C(v1.crc, image_crc(&v1, offsetof(ImageV1, crc))))
			return false;
		record = StateRecord{v1.epoch_ms, Layout{v1.time_bits, v1.node_bits, v1.seq_bits, 1}, v1.reserved_ms,
		                     v1.timeline};
		return true;
	}
	if (head[1] == kVersion && got == static_cast<ssize_t>(sizeof(Image))) {
		Image image;
		std::memcpy(&image, buffer, sizeof(image));
		if (!EQ_CRC32C(image.crc, image_crc(&image, offsetof(Image, crc))))
			return false;
		record = StateRecord{image.epoch_ms, Layout{image.time_bits, image.node_bits, image.seq_bits, image.unit_ms},
		                     image.reserved_tick, image.timeline};
		return true;
	}
	return false;
}

} // namespace

StateRead read_state(StateRecord &record) {
	const int fd = open(kStateFile, O_RDONLY | PG_BINARY, 0);
	if (fd < 0) {
		if (errno == ENOENT)
			return StateRead::Missing;
		ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not open \"%s\": %m", kStateFile)));
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

bool write_state(const StateRecord &record, int elevel) {
	Image image;
	std::memset(&image, 0, sizeof(image));
	image.magic = kMagic;
	image.version = kVersion;
	image.epoch_ms = record.epoch_ms;
	image.time_bits = record.layout.time_bits;
	image.node_bits = record.layout.node_bits;
	image.seq_bits = record.layout.seq_bits;
	image.unit_ms = record.layout.unit_ms;
	image.reserved_tick = record.reserved_tick;
	image.timeline = record.timeline;
	image.crc = image_crc(&image, offsetof(Image, crc));

	const int fd = open(kTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
	if (fd < 0) {
		ereport(elevel, (errcode_for_file_access(), errmsg("could not create file \"%s\": %m", kTempFile)));
		return false;
	}
	errno = 0;
	const bool written = write(fd, &image, sizeof(image)) == static_cast<ssize_t>(sizeof(image));
	const int write_errno = errno != 0 ? errno : ENOSPC; // a short write without errno means a full disk
	if (close(fd) != 0 || !written) {
		if (!written)
			errno = write_errno;
		ereport(elevel, (errcode_for_file_access(), errmsg("could not write file \"%s\": %m", kTempFile)));
		return false;
	}
	// Fsyncs the new file, renames it over the old one, and fsyncs the directory.
	return durable_rename(kTempFile, kStateFile, elevel) == 0;
}

bool cluster_shut_down_cleanly() {
	ControlFileData control;
	const int fd = open(kControlFile, O_RDONLY | PG_BINARY, 0);
	if (fd < 0)
		return false;
	const bool whole = read(fd, &control, sizeof(control)) == static_cast<ssize_t>(sizeof(control));
	close(fd);
	if (!whole || !EQ_CRC32C(control.crc, image_crc(&control, offsetof(ControlFileData, crc))))
		return false;
	return control.state == DB_SHUTDOWNED || control.state == DB_SHUTDOWNED_IN_RECOVERY;
}

} // namespace snowflake
