// Hand-made state files (see state_image.hpp): one layout of the fields for
// every version, each version a prefix of the next but for its tail, and the
// CRC-32C over everything before the CRC, as PostgreSQL's pg_crc32c computes it.
#include "state_image.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <sys/stat.h>
#include <vector>

namespace snowflake::test {
namespace {

constexpr uint32_t kMagic = 0x46574e53; // "SNWF"

// CRC-32C (Castagnoli), bit by bit.
uint32_t crc32c(const unsigned char *data, size_t length) {
	uint32_t crc = 0xFFFFFFFF;
	for (size_t i = 0; i < length; ++i) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; ++bit)
			crc = (crc >> 1) ^ (0x82F63B78 & (0 - (crc & 1)));
	}
	return crc ^ 0xFFFFFFFF;
}

// Where each version's fields end and its CRC sits, and its whole size.
struct Shape {
	size_t crc_at, size;
};
Shape shape_of(uint32_t version) {
	switch (version) {
	case 1:
		return {40, 48};
	case 2:
		return {48, 56};
	case 3:
		return {64, 72};
	}
	throw std::invalid_argument("no state file version " + std::to_string(version));
}

// Copies value into bytes at offset.
template <typename T> void put(std::vector<unsigned char> &bytes, size_t offset, T value) {
	std::memcpy(bytes.data() + offset, &value, sizeof(T));
}
template <typename T> T get(const std::vector<unsigned char> &bytes, size_t offset) {
	T value;
	std::memcpy(&value, bytes.data() + offset, sizeof(T));
	return value;
}

} // namespace

void write_state_image(const std::string &path, const StateImage &image) {
	const Shape shape = shape_of(image.version);
	std::vector<unsigned char> bytes(shape.size, 0);
	put(bytes, 0, kMagic);
	put(bytes, 4, image.version);
	put(bytes, 8, image.epoch_ms);
	put(bytes, 16, image.layout.time_bits);
	put(bytes, 20, image.layout.node_bits);
	put(bytes, 24, image.layout.seq_bits);
	put(bytes, 28, image.timeline);
	put(bytes, 32, image.reserved_tick); // version 1: milliseconds, the only unit it knew
	if (image.version >= 2)
		put(bytes, 40, image.layout.unit_ms);
	if (image.version >= 3) {
		put(bytes, 44, image.exit_mark);
		put(bytes, 48, image.system_identifier);
		put(bytes, 56, image.write_latency_us);
	}
	put(bytes, shape.crc_at, crc32c(bytes.data(), shape.crc_at));
	std::ofstream(path, std::ios::binary | std::ios::trunc)
	    .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

StateImage read_state_image(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	const std::vector<unsigned char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
	if (bytes.size() != shape_of(3).size || get<uint32_t>(bytes, 0) != kMagic || get<uint32_t>(bytes, 4) != 3)
		throw std::runtime_error(path + " is not a version 3 state file");
	StateImage image;
	image.epoch_ms = get<int64_t>(bytes, 8);
	image.layout = Layout{get<int32_t>(bytes, 16), get<int32_t>(bytes, 20), get<int32_t>(bytes, 24), get<int32_t>(bytes, 40)};
	image.timeline = get<uint32_t>(bytes, 28);
	image.reserved_tick = get<int64_t>(bytes, 32);
	image.system_identifier = get<uint64_t>(bytes, 48);
	image.write_latency_us = get<int64_t>(bytes, 56);
	image.exit_mark = get<uint32_t>(bytes, 44);
	return image;
}

long file_size(const std::string &path) {
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? static_cast<long>(st.st_size) : -1;
}

} // namespace snowflake::test
