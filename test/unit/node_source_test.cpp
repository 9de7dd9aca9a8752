// Unit tests of node sources (src/node_source.*): snowflake.node_source's
// forms and every malformed one, the trailing digits of host names as
// StatefulSets and CloudNativePG name pods, environment variables, the offset,
// and every number outside the layout's nodes.
#include "node_source.hpp"

#include <gtest/gtest.h>

namespace snowflake {
namespace {

constexpr int32_t kTwitterNodes = 1023;

TEST(NodeSource, ParsesEveryForm) {
	NodeSource source;
	ASSERT_EQ(parse_node_source("setting", source), nullptr);
	EXPECT_EQ(source.kind, NodeSourceKind::Setting);
	ASSERT_EQ(parse_node_source("hostname", source), nullptr);
	EXPECT_EQ(source.kind, NodeSourceKind::HostName);
	ASSERT_EQ(parse_node_source("citus", source), nullptr);
	EXPECT_EQ(source.kind, NodeSourceKind::Citus);
	ASSERT_EQ(parse_node_source("env:POD_INDEX", source), nullptr);
	EXPECT_EQ(source.kind, NodeSourceKind::Environment);
	EXPECT_EQ(source.variable, "POD_INDEX");
	ASSERT_EQ(parse_node_source("env:_x9", source), nullptr);
	EXPECT_EQ(source.variable, "_x9");
	ASSERT_EQ(parse_node_source("env:" + std::string(64, 'A'), source), nullptr);
}

TEST(NodeSource, RefusesEveryOtherText) {
	NodeSource source;
	for (const char *text : {"", "Setting", "host name", "hostname ", "env:", "env:9LIVES", "env:POD-INDEX",
	                         "env:POD INDEX", "env:$X", "citus:1", "env", "ENV:X", "node"})
		EXPECT_NE(parse_node_source(text, source), nullptr) << '"' << text << '"';
	EXPECT_NE(parse_node_source("env:" + std::string(65, 'A'), source), nullptr);
}

TEST(NodeSource, HostNamesGiveTheirTrailingDigits) {
	EXPECT_EQ(node_from_host_name("pg-7", 0, kTwitterNodes).node, 7);
	EXPECT_EQ(node_from_host_name("orders-db-12", 0, kTwitterNodes).node, 12);
	EXPECT_EQ(node_from_host_name("cluster-example-3", 0, kTwitterNodes).node, 3); // CloudNativePG
	EXPECT_EQ(node_from_host_name("pg-007", 0, kTwitterNodes).node, 7);
	EXPECT_EQ(node_from_host_name("db2", 0, kTwitterNodes).node, 2);
	EXPECT_EQ(node_from_host_name("42", 0, kTwitterNodes).node, 42);
	EXPECT_EQ(node_from_host_name("pg-0", 0, kTwitterNodes).node, 0);
	EXPECT_EQ(node_from_host_name("db-1-replica-5", 0, kTwitterNodes).node, 5); // only the trailing digits
	const DerivedNode seven = node_from_host_name("pg-7", 512, kTwitterNodes);
	EXPECT_EQ(seven.node, 519);
	EXPECT_EQ(seven.number, 7);
	EXPECT_EQ(seven.problem, NodeProblem::None);
}

TEST(NodeSource, AHostNameWithoutANumberOrOneTooLargeIsAProblem) {
	for (const char *name : {"", "db", "pg-", "pg-7a", "localhost"}) {
		const DerivedNode d = node_from_host_name(name, 0, kTwitterNodes);
		EXPECT_EQ(d.problem, NodeProblem::NoDigitsInHostName) << name;
		EXPECT_EQ(d.node, -1);
	}
	EXPECT_EQ(node_from_host_name("pg-1024", 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_host_name("pg-1024", 0, kTwitterNodes).number, 1024);
	EXPECT_EQ(node_from_host_name("pg-1000", 24, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_host_name("pg-999", 24, kTwitterNodes).node, 1023);
	EXPECT_EQ(node_from_host_name("pg-99999999999999999999999", 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_host_name("pg-32", 0, 31).problem, NodeProblem::OutOfRange); // js53: 32 nodes
}

TEST(NodeSource, VariablesAreExactlyADecimalNumber) {
	EXPECT_EQ(node_from_variable("3", true, 0, kTwitterNodes).node, 3);
	EXPECT_EQ(node_from_variable("0", true, 512, kTwitterNodes).node, 512);
	EXPECT_EQ(node_from_variable("", false, 0, kTwitterNodes).problem, NodeProblem::VariableUnset);
	for (const char *value : {"", " 3", "3 ", "-1", "+3", "3.0", "three", "0x3", "3\n"})
		EXPECT_EQ(node_from_variable(value, true, 0, kTwitterNodes).problem, NodeProblem::VariableInvalid)
		    << '"' << value << '"';
	EXPECT_EQ(node_from_variable("1024", true, 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_variable("1234567890123456789012", true, 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
}

TEST(NodeSource, NumbersWithTheOffsetStayInTheLayout) {
	EXPECT_EQ(node_from_number(0, 0, kTwitterNodes).node, 0);
	EXPECT_EQ(node_from_number(1023, 0, kTwitterNodes).node, 1023);
	EXPECT_EQ(node_from_number(511, 512, kTwitterNodes).node, 1023);
	EXPECT_EQ(node_from_number(512, 512, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_number(-1, 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
	EXPECT_EQ(node_from_number(int64_t{1} << 40, 0, kTwitterNodes).problem, NodeProblem::OutOfRange);
}

} // namespace
} // namespace snowflake
