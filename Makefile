# PGXS build of the snowflake extension (C++17), plus the project's test
# targets: `make unitcheck` (GoogleTest, no server), `make regresscheck`
# (pg_regress against temporary servers; `make installcheck-one T=NAME` runs
# one test) and `make integrationcheck` (libpqxx against real servers); run
# the server targets as a non-root user.

EXTENSION = snowflake
EXTVERSION = $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" snowflake.control)
MODULE_big = snowflake
OBJS = $(patsubst %.cpp,%.o,$(wildcard src/*.cpp))
# The current version's install script is built from one readable source per area
# (src/sql/, in this order); released install and upgrade scripts are files of their own.
SQL_SOURCES = $(addprefix src/sql/,generator.sql reservation.sql decoding.sql time_range.sql many_servers.sql node_check.sql encoding.sql public_ids.sql type.sql convert.sql convert_views.sql)
# Upgrade scripts of unreleased versions are built from src/sql/upgrade--A--B.sql (see below).
UPGRADE_SOURCES = $(wildcard src/sql/upgrade--*.sql)
DATA_built = snowflake--$(EXTVERSION).sql $(patsubst src/sql/upgrade--%,snowflake--%,$(UPGRADE_SOURCES))
DATA = $(filter-out $(DATA_built),$(wildcard snowflake--*.sql))

PG_CONFIG ?= pg_config

# Server headers are system headers to us, so -Wall -Wextra speak only of our code.
PG_CPPFLAGS = -Isrc -DSNOWFLAKE_VERSION='"$(EXTVERSION)"'
PG_CXXFLAGS = -std=c++17 -Wall -Wextra -Wno-register $(if $(WERROR),-Werror)
# PGXS links with $(CC); the C++ runtime must be named.
SHLIB_LINK = -lstdc++ -lcrypto
# No LLVM bitcode: JIT inlining of a lock-taking generator buys nothing, and the
# bitcode pass would compile C++17 with clang but without PG_CXXFLAGS.
override with_llvm = no

EXTRA_CLEAN = build

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The library is replaced by a rename, never removed first. A running server's sessions find it by name
# ($libdir/snowflake) at their first call, and install(1) removes the old file before it writes the new
# one: a call in that moment failed with 58P01 (the rollback suite saw one in 35,640 statements).
INSTALL_SHLIB = $(SHELL) -c 'install -m 755 "$$0" "$$1.new" && mv -f "$$1.new" "$$1"'

override CPPFLAGS := $(patsubst -I%,-isystem %,$(filter -I$(includedir)%,$(CPPFLAGS))) \
	$(filter-out -I$(includedir)%,$(CPPFLAGS))

snowflake--$(EXTVERSION).sql: $(SQL_SOURCES) snowflake.control
	{ echo '-- snowflake $(EXTVERSION): every SQL object of the extension. Built by make from $(SQL_SOURCES); edit those.'; \
	  echo '\\echo Use "CREATE EXTENSION snowflake" to load this file. \\quit'; \
	  for f in $(SQL_SOURCES); do echo; echo "-- == $$f"; echo; cat $$f; done; } >$@

# An unreleased upgrade script: its source with each -- @new, @replace, @recreate and @init-privileges
# line expanded from the sources by src/sql/build_upgrade.awk (CONTRIBUTING.md, Building).
snowflake--%.sql: src/sql/upgrade--%.sql src/sql/build_upgrade.awk src/sql/upgrade_privileges.sql $(SQL_SOURCES)
	awk -v helpers=src/sql/upgrade_privileges.sql -f src/sql/build_upgrade.awk $(SQL_SOURCES) $< >$@.tmp && mv $@.tmp $@

# PGXS tracks no header dependencies: rebuild every object when any header changes.
$(OBJS): $(wildcard src/*.hpp)

# --- Unit tests of the pure core (GoogleTest from Debian's libgtest-dev).
# The test programs are built one object a source file (make -j compiles them side by side);
# like the extension's, every object is rebuilt when any header changes.
BUILD ?= build
TEST_CXXFLAGS = -O2 -g -Wall -Wextra $(if $(WERROR),-Werror) -Isrc
UNIT_SRCS = $(wildcard test/unit/*.cpp) src/generator.cpp src/encoding.cpp src/node_source.cpp src/mask.cpp src/claim_rules.cpp
UNIT_OBJS = $(patsubst %.cpp,$(BUILD)/unit-objs/%.o,$(UNIT_SRCS))

$(UNIT_OBJS): $(wildcard src/*.hpp test/unit/*.hpp)
$(BUILD)/unit-objs/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 $(TEST_CXXFLAGS) -c -o $@ $<

$(BUILD)/unit_tests: $(UNIT_OBJS)
	$(CXX) -o $@ $^ -lgtest -lgtest_main -pthread -lcrypto

unitcheck: $(BUILD)/unit_tests
	$(BUILD)/unit_tests

# --- Integration tests: real servers driven through libpqxx (Debian's libpqxx-dev).
INTEGRATION_SRCS = $(wildcard test/integration/*.cpp) src/generator.cpp
INTEGRATION_OBJS = $(patsubst %.cpp,$(BUILD)/integration-objs/%.o,$(INTEGRATION_SRCS))

# libpqxx 8 (Debian sid) needs C++20; 6.4 and 7.x build as C++17 like the rest.
INTEGRATION_STD = $(shell pkg-config --atleast-version=8 libpqxx && echo c++20 || echo c++17)

$(INTEGRATION_OBJS): $(wildcard src/*.hpp test/integration/*.hpp)
$(BUILD)/integration-objs/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) -std=$(INTEGRATION_STD) $(TEST_CXXFLAGS) $(shell pkg-config --cflags libpqxx) -c -o $@ $<

$(BUILD)/integration_tests: $(INTEGRATION_OBJS)
	$(CXX) -o $@ $^ $(shell pkg-config --libs libpqxx) -lgtest -lgtest_main -pthread

# Run as a non-root user: it starts servers with initdb and pg_ctl under $(BUILD)/integration.
integrationcheck: $(BUILD)/integration_tests
	@mkdir -p $(BUILD)/integration
	SNOWFLAKE_TEST_DIR=$(abspath $(BUILD))/integration PG_BIN=$(shell $(PG_CONFIG) --bindir) $(BUILD)/integration_tests

# --- Regression tests: each schedule gets its own preloaded (or not) temporary server.
REGRESS_SUITES = main clock_faults wait_policy unset_node not_preloaded custom_epoch_not_preloaded layout_sonyflake layout_js53 public_ids upgrade

regresscheck: $(addprefix regresscheck-,$(REGRESS_SUITES))
installcheck: regresscheck

# pg_partman is not packaged for every major (none for PostgreSQL 19 yet): without it, its test is left out.
ifeq ($(wildcard $(shell $(PG_CONFIG) --sharedir)/extension/pg_partman.control),)
REGRESS_SKIP = partman
endif

regresscheck-%:
	@mkdir -p $(BUILD)/regress/$*
	$(if $(REGRESS_SKIP),@echo "pg_partman is not installed: leaving out its test")
	@sed -E '$(foreach t,$(REGRESS_SKIP),s/ $(t)( |$$)/\1/;)' test/regress/$*.schedule >$(BUILD)/regress/$*/schedule
	$(pg_regress_installcheck) --outputdir=$(BUILD)/regress/$* --temp-instance=$(BUILD)/regress/$*/tmp_check \
		--temp-config=test/regress/$*.conf --schedule=$(BUILD)/regress/$*/schedule --dbname=contrib_regression

# One regression test alone, on the server of the schedule that runs it, after that schedule's first
# test (which creates the extension): make installcheck-one T=lastval. A test that reads what the
# tests before it left (concurrent_check, stats) needs its whole schedule: make regresscheck-main.
installcheck-one:
	@[ -n "$(T)" ] || { echo "usage: make installcheck-one T=NAME, NAME a test in sql/"; exit 2; }
	@schedule=$$(grep -lE '^test:(.* )?$(T)( |$$)' test/regress/*.schedule | head -1); \
	[ -n "$$schedule" ] || { echo "no schedule in test/regress/ runs a test called $(T)"; exit 2; }; \
	first=$$(sed -n 's/^test: *\([^ ]*\).*/\1/p' "$$schedule" | head -1); \
	mkdir -p $(BUILD)/regress/one; \
	{ echo "test: $$first"; [ "$$first" = "$(T)" ] || echo "test: $(T)"; } >$(BUILD)/regress/one/schedule; \
	echo "$(T) on the server of $$schedule"; \
	$(pg_regress_installcheck) --outputdir=$(BUILD)/regress/one --temp-instance=$(BUILD)/regress/one/tmp_check \
		--temp-config=$${schedule%.schedule}.conf --schedule=$(BUILD)/regress/one/schedule --dbname=contrib_regression

# --- PGXN release: the committed tree (HEAD) as snowflake-<version>.zip with that prefix;
# .gitattributes (export-ignore) leaves out CI and the Debian packaging.
DISTFILE ?= snowflake-$(EXTVERSION).zip

dist:
	git archive --format=zip --prefix=snowflake-$(EXTVERSION)/ --output=$(DISTFILE) HEAD

.PHONY: unitcheck regresscheck installcheck-one integrationcheck dist
