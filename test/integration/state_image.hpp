// State files made by hand, for the tests that start a server on one: the
// bytes of every version snowflake has written (1 in 0.1.0, 2 in 0.2.0, 3
// since 0.3.0; src/state_file.cpp), with a valid CRC-32C, and the fields of a
// version 3 file a server wrote, read back.
#pragma once

#include "generator.hpp"

#include <cstdint>
#include <string>

namespace snowflake::test {

// The fields of a state file; a version writes those it has (version 1: no unit, twitter only,
// the reservation in ms; version 2: no system identifier or latency).
struct StateImage {
	uint32_t version = 3;
	int64_t epoch_ms = kTwitterEpochMs;
	Layout layout = kTwitter;
	uint32_t timeline = 1;
	int64_t reserved_tick = 0;
	uint64_t system_identifier = 0;
	int64_t write_latency_us = 0;
	uint32_t exit_mark = 0; // version 3 only: the shutdown a postmaster wrote it at (0: none)
};

// Writes image to path as its version lays it out, CRC-valid, replacing any file there.
void write_state_image(const std::string &path, const StateImage &image);

// The fields of the version 3 file at path; throws unless it is one.
StateImage read_state_image(const std::string &path);

// The size of a file in bytes, -1 if it is missing.
long file_size(const std::string &path);

} // namespace snowflake::test
