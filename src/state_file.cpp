// Reading and writing $PGDATA/snowflake.state (see state_file.hpp for what it
// holds and why it is a file): a fixed-size image with a magic number, a
// version and a CRC-32C, written aside and moved into place with
// durable_rename, so it is replaced atomically and survives a crash.
#include "state_file.hpp"

#include "pg_boundary.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

extern "C" {
#include "common/file_perm.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
}

namespace snowflake {
namespace {

constexpr uint32_t kMagic = 0x46574e53; // "SNWF"
constexpr uint32_t kVersion = 1;
constexpr const char *kTempFile = "snowflake.state.tmp";

// The bytes on disk: every field explicit, padding zeroed, the CRC over all before it.
struct Image {
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
static_assert(sizeof(Image) == 48, "the image has no hidden padding");

// The CRC-32C of everything in image before the crc field.
pg_crc32c image_crc(const Image &image) {
	pg_crc32c crc;
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, &image, offsetof(Image, crc));
	FIN_CRC32C(crc);
	return crc;
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
	Image image;
	const ssize_t got = read(fd, &image, sizeof(image));
	char extra;
	const bool longer = got == static_cast<ssize_t>(sizeof(image)) && read(fd, &extra, 1) > 0;
	const int read_errno = errno;
	close(fd);
	if (got < 0) {
		errno = read_errno;
		ereport(LOG, (errcode_for_file_access(), errmsg("snowflake: could not read \"%s\": %m", kStateFile)));
		return StateRead::Unreadable;
	}
	if (got != static_cast<ssize_t>(sizeof(image)) || longer || image.magic != kMagic || image.version != kVersion ||
	    !EQ_CRC32C(image.crc, image_crc(image))) {
		ereport(LOG, (errmsg("snowflake: \"%s\" is not a valid snowflake state record", kStateFile)));
		return StateRead::Corrupt;
	}
	record = StateRecord{image.epoch_ms, image.time_bits,   image.node_bits,
	                     image.seq_bits, image.reserved_ms, image.timeline};
	return StateRead::Loaded;
}

bool write_state(const StateRecord &record, int elevel) {
	Image image;
	std::memset(&image, 0, sizeof(image));
	image.magic = kMagic;
	image.version = kVersion;
	image.epoch_ms = record.epoch_ms;
	image.time_bits = record.time_bits;
	image.node_bits = record.node_bits;
	image.seq_bits = record.seq_bits;
	image.reserved_ms = record.reserved_ms;
	image.timeline = record.timeline;
	image.crc = image_crc(image);

	const int fd = open(kTempFile, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY, pg_file_create_mode);
	if (fd < 0) {
		ereport(elevel, (errcode_for_file_access(), errmsg("could not create \"%s\": %m", kTempFile)));
		return false;
	}
	errno = 0;
	const bool written = write(fd, &image, sizeof(image)) == static_cast<ssize_t>(sizeof(image));
	const int write_errno = errno != 0 ? errno : ENOSPC; // a short write without errno means a full disk
	if (close(fd) != 0 || !written) {
		if (!written)
			errno = write_errno;
		ereport(elevel, (errcode_for_file_access(), errmsg("could not write \"%s\": %m", kTempFile)));
		return false;
	}
	// Fsyncs the new file, renames it over the old one, and fsyncs the directory.
	return durable_rename(kTempFile, kStateFile, elevel) == 0;
}

} // namespace snowflake
