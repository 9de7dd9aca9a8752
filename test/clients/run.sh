#!/usr/bin/env bash
# The clients suite: runs real drivers, ORMs and frameworks against a
# temporary PostgreSQL server with the installed extension preloaded, proving
# every recipe docs/clients.md and docs/monitoring.md publish and showing each
# trap they warn about. Each part installs what it needs (Debian packages;
# npm modules from the committed lock file, with no install scripts), then
# runs its tests; its install and run times are printed, and a summary of
# every part at the end.
# Usage (as root): bash test/clients/run.sh [PART...]   (no argument: every part)
# The parts, and the tests each runs (each test file's header says what it checks):
#   python    python/test_psycopg3.py, python/test_sqlalchemy.py (psycopg 3, SQLAlchemy 1.4)
#   django    python/test_django.py with the models of python/shop/ (Django 3.2)
#   asyncpg   python/test_asyncpg.py
#   js        js/*.test.mjs under node --test (node-postgres, Knex, Drizzle, Sequelize, TypeORM;
#             public_ids.test.mjs: the public-ID recipe js/public_ids.mjs against the server, and
#             against a second server on the js53 layout, 127.0.0.1:$CLIENTS_JS53_PORT, 26304 by default)
#   prisma    prisma validate and format --check, then js/prisma.test.ts (Prisma 7)
#   kysely    js/kysely.test.ts;  mikroorm  js/mikroorm.test.ts (MikroORM 6)
#   php       php/lastval.php (PDO);  laravel  php/eloquent.php (Eloquent 8)
#   java      java/HibernateBlocks.java (JDBC, Hibernate 3.6); java/PublicIdsCheck.java (the public-ID
#             recipe java/PublicIds.java, on Bouncy Castle's FF1, against the server)
#   go        go/pgx_test.go (pgx v4);  rust  rust/tests/keys.rs (tokio-postgres 0.7)
#   rails     ruby/activerecord_trap_test.rb, then ruby/activerecord_test.rb (Active Record 6.1)
#   exporter  exporter.sh (prometheus-postgres-exporter and promtool, 127.0.0.1:26301)
#   pgbouncer pgbouncer.sh (transaction pooling under pgbench, 127.0.0.1:26302)
# setup.sql, loaded into postgres and template1, creates the extension and the
# helpers the framework tests share: clients_make_tables(prefix) (a bigint-keyed
# and a snowflake-keyed table) and clients_check_ids(table, ids), which passes
# only when the IDs a client got back are exactly the table's id::text and at
# least one of them is an ID a double cannot hold.
# The server (test/lib/server.sh) lives under build/servers/clients, listens
# on 127.0.0.1:$CLIENTS_PORT (26300 by default), node 7. The JavaScript parts
# share one npm ci of js/package-lock.json (the first of them pays for it) and
# need Node 20.19 or later (Prisma 7's minimum). Builds that outlive a run (Go's
# cache, Rust's target directory keyed on Cargo.lock) are kept under
# /var/cache/snowflake-clients, outside the checkout.
# In the version matrix only the parts scripts/test.sh names (CLIENTS_MATRIX_PARTS)
# run, on each release's own Node, JDK, JDBC driver and Hibernate 3.6.10 (trixie
# and sid still package libhibernate3-java; default-jdk-headless is 21 in trixie,
# 25 in sid) and the same npm lock file (Node 20.19 in trixie, 24 in sid); npm
# there trusts the host's CA certificates, copied into the chroot. The other
# parts test Debian 12's packaged framework versions (Django 3.2, Active Record
# 6.1, Eloquent 8, pgx v4 in GOPATH mode, tokio-postgres against Debian 12's
# crate registry), which later releases replace, and their recipes depend on the
# framework, not on the PostgreSQL major.
# Times on the 2-core test machine (2026-11-24), install + run: in a new Debian
# 12 chroot (Node 20 given), rust 193 + 1 s (its packages and the cold build),
# go 59 + 0, java 23 + 5, php 21 + 0, rails 20 + 4, laravel 12 + 0, exporter
# 7 + 0, pgbouncer 6 + 1, django 5 + 1, python 4 + 0, asyncpg 1 + 1, and the
# JavaScript parts 33 s of npm ci then 2, 7, 2 and 4 s: about 7 minutes in all.
# With everything installed and Rust's target directory cached: 132 s. The
# matrix's JavaScript and Java parts (chroots provisioned): 96 s on 17 (41 s of
# it npm ci), 38 s on 18, 26 s on 19.
source "$(dirname "$0")/../lib/server.sh"

SUITE_NAME=clients
PORT=${CLIENTS_PORT:-26300}
JS53_PORT=${CLIENTS_JS53_PORT:-26304}
HERE=$ROOT/test/clients
CACHE=/var/cache/snowflake-clients
ALL_PARTS=(python django asyncpg js prisma kysely mikroorm php laravel java go rust rails exporter pgbouncer)
PARTS=("$@")
[ ${#PARTS[@]} -eq 0 ] && PARTS=("${ALL_PARTS[@]}")
for part in "${PARTS[@]}"; do
  [[ " ${ALL_PARTS[*]} " == *" $part "* ]] || die "unknown part '$part' (choose from: ${ALL_PARTS[*]})"
done

# Installs node and npm if missing, then the JavaScript parts' modules, once per run (a failure is
# not tried again by the next part): exactly the lock file's versions, and no package's install
# scripts (none of the tests needs one; Prisma's would fetch an engine from outside npm).
npm_modules() {
  [ -n "${NPM_DONE:-}" ] && return "$NPM_DONE"
  NPM_DONE=1
  command -v node >/dev/null && command -v npm >/dev/null || ensure_packages nodejs npm
  # Prisma 7's minimum; Debian 12's own nodejs is 18.
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' ||
    { echo "Node $(node -v) is too old for the JavaScript parts: they need 20.19 or later (Prisma 7)"; return 1; }
  (cd "$HERE/js" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) && NPM_DONE=0
}

# Prisma's CLI, offline: every command first makes sure Prisma's native schema engine is there and
# downloads it from Prisma's own server otherwise. generate, validate and format need no engine, so
# PRISMA_SCHEMA_ENGINE_BINARY names a stand-in that exists and the download is skipped.
prisma() {
  (cd "$HERE/js" && PRISMA_SCHEMA_ENGINE_BINARY=/bin/false PRISMA_HIDE_UPDATE_MESSAGE=1 \
    node_modules/.bin/prisma "$@" --schema prisma/schema.prisma)
}

# Go in GOPATH mode against Debian's packaged sources, offline; the build cache outside the checkout.
go_() {
  mkdir -p "$CACHE/go/path"
  (cd "$HERE/go" && GO111MODULE=off GOFLAGS= GOPATH="$CACHE/go/path:/usr/share/gocode" GOCACHE="$CACHE/go/cache" go "$@")
}

# Debian's cargo and rustc (not a rustup toolchain that may come first on PATH), offline against
# Debian's crate registry (test/clients/rust/.cargo/config.toml), with a target directory per
# Cargo.lock outside the checkout; the directories of other lock files are removed.
cargo_() {
  local target
  target=$CACHE/rust-$(sha256sum "$HERE/rust/Cargo.lock" | cut -c1-16)
  mkdir -p "$target" && find "$CACHE" -maxdepth 1 -name 'rust-*' ! -path "$target" -exec rm -rf {} +
  (cd "$HERE/rust" && CARGO_HOME="$CACHE/cargo-home" CARGO_TARGET_DIR="$target" RUSTC=/usr/bin/rustc \
    RUSTDOC=/usr/bin/rustdoc /usr/bin/cargo "$@" --locked)
}

# Installs what part $1 needs, and builds or generates what its tests load.
install_part() {
  case $1 in
    python) ensure_packages python3 python3-psycopg python3-psycopg2 python3-sqlalchemy python3-pytest ;;
    django) ensure_packages python3 python3-django python3-psycopg2 python3-pytest ;;
    asyncpg) ensure_packages python3 python3-asyncpg python3-pytest ;;
    js | kysely | mikroorm) npm_modules ;;
    prisma) npm_modules && prisma generate >/dev/null ;;
    php) ensure_packages php-cli php-pgsql ;;
    laravel) ensure_packages php-cli php-pgsql php-illuminate-database ;;
    java) ensure_packages default-jdk-headless libpostgresql-jdbc-java libhibernate3-java libbcprov-java ;;
    go) ensure_packages golang-go golang-github-jackc-pgx-v4-dev && go_ test -c -o "$CACHE/go/pgx.test" . ;;
    rust)
      ensure_packages cargo rustc librust-tokio-postgres-dev librust-tokio-dev librust-tokio-macros-dev librust-bytes-dev &&
        cargo_ test --no-run -q ;;
    rails) ensure_packages ruby ruby-activerecord ruby-pg ;;
    exporter) ensure_packages prometheus-postgres-exporter prometheus curl python3-yaml ;;
    pgbouncer) ensure_packages pgbouncer ;;
  esac
}

# Runs part $1's tests against the server.
test_part() {
  case $1 in
    python) /usr/bin/python3 -m pytest -q -p no:cacheprovider "$HERE/python/test_psycopg3.py" "$HERE/python/test_sqlalchemy.py" ;;
    django) /usr/bin/python3 -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$HERE/python/test_django.py" ;;
    asyncpg) /usr/bin/python3 -m pytest -q -p no:cacheprovider "$HERE/python/test_asyncpg.py" ;;
    js) start_js53_server && (cd "$HERE/js" && CLIENTS_JS53_PORT=$JS53_PORT node --test --test-concurrency=1 ./*.test.mjs) ;;
    # The schema as written is valid and formatted; migrate and db pull need the native engine.
    prisma) prisma validate && prisma format --check && (cd "$HERE/js" && node --import tsx --test prisma.test.ts) ;;
    kysely | mikroorm) (cd "$HERE/js" && node --import tsx --test "$1.test.ts") ;;
    php) php "$HERE/php/lastval.php" ;;
    laravel) php "$HERE/php/eloquent.php" ;;
    java) java_clients ;;
    go) "$CACHE/go/pgx.test" -test.v -test.count=1 ;;
    rust) cargo_ test -q ;;
    # Without the recipe first, in a process of its own: the recipe changes the adapter for good.
    rails) ruby "$HERE/ruby/activerecord_trap_test.rb" && ruby "$HERE/ruby/activerecord_test.rb" ;;
    exporter) bash "$HERE/exporter.sh" ;;
    pgbouncer) CLIENTS_DIR=$BUILD/clients PG_BIN=$PG_BIN bash "$HERE/pgbouncer.sh" ;;
  esac
}

# Starts a fresh preloaded server on 127.0.0.1:$PORT with snowflake.node = 7 and setup.sql loaded
# into postgres and template1 (so databases the tests create have it too).
start_server() {
  server_init main "$PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 7"
  server_start main
  local db
  for db in template1 postgres; do psql_on main -At -d "$db" -f "$HERE/setup.sql" >/dev/null; done
}

# The public-ID test's second server (js/public_ids.test.mjs): the js53 layout, whose masks stay
# below 2^53, with its key list in postgresql.conf; started once, by the js part.
start_js53_server() {
  [ -n "${JS53_STARTED:-}" ] && return 0
  JS53_STARTED=1
  server_init js53 "$JS53_PORT" "shared_preload_libraries = 'snowflake'" "snowflake.node = 7" "snowflake.layout = 'js53'" \
    "snowflake.mask_keys = 'J:2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f'" &&
    server_start js53 && psql_on js53 -q -c "CREATE EXTENSION snowflake"
}

# Compiles and runs test/clients/java against Debian's JDBC driver, Hibernate 3.6 and Bouncy Castle jars.
java_clients() {
  local jars=/usr/share/java cp
  cp=$(printf "$jars/%s:" hibernate-core.jar postgresql.jar dom4j.jar antlr.jar commons-collections3.jar slf4j-api.jar \
    slf4j-nop.jar geronimo-jta-1.2-spec.jar geronimo-jpa_2.0_spec.jar hibernate-commons-annotations.jar bcprov.jar)
  rm -rf "$BUILD/clients/java" && mkdir -p "$BUILD/clients/java" &&
    javac -d "$BUILD/clients/java" -cp "$cp" "$HERE"/java/*.java || return 1
  local status=0 # both programs run, whichever fails
  java -Dsnowflake.mapping="$HERE/java/item.hbm.xml" -cp "$BUILD/clients/java:$cp" HibernateBlocks || status=1
  java -Dsnowflake.vectors="$ROOT/test/unit/mask_vectors.inc" -cp "$BUILD/clients/java:$cp" PublicIdsCheck || status=1
  return $status
}

rm -rf "$BUILD/clients"
start_server
export PGHOST=127.0.0.1 PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres SNOWFLAKE_NODE=7
status=0
summary=()
for part in "${PARTS[@]}"; do
  echo "--- clients: $part"
  start=$SECONDS
  result=passed
  if ! install_part "$part"; then
    result="FAILED to install"
  fi
  installed=$SECONDS
  if [ "$result" = passed ] && ! test_part "$part"; then
    result=FAILED
  fi
  [ "$result" = passed ] || status=1
  summary+=("$(printf '%-10s %-18s install %4d s, run %4d s' "$part" "$result" $((installed - start)) $((SECONDS - installed)))")
  echo "--- clients: ${summary[-1]}"
done
echo "--- clients: summary"
printf '%s\n' "${summary[@]}"
exit $status
