#!/usr/bin/env bash
# The oci suite: snowflake's extension image for CloudNativePG (scripts/oci.sh, docs/kubernetes.md)
# on PostgreSQL 18 and later, where extension_control_path exists. It runs the page's shell blocks
# as written (the build, the look at the labels, the push to a registry: a local one here, run by
# Debian's docker-registry on 127.0.0.1), builds the last release's image the same way, then pulls
# both with a second tool (skopeo, then tar for the layers) and mounts each where CloudNativePG
# mounts an image (/extensions/NAME, here under build/) with the system's own snowflake files moved
# away, so nothing but the image can serve them. A server set up as CloudNativePG sets one up (its
# paths, and the preload list and parameters of test/servers/manifests/cloudnativepg.yaml, as
# instance orders-1) then: creates the extension from the last release's image, issues IDs, moves
# to this image with ALTER EXTENSION UPDATE, and issues, reports (snowflake_stats()) and checks its
# node. Last it records what a user sees when the image is missing, and (where another major's
# server is installed: the PostgreSQL 19 chroot has 18's) when it was built for another major.
# Usage, as root from the checkout, on PostgreSQL 18 or later: bash test/servers/oci.sh
SUITE_NAME=oci
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[ "$PG_MAJOR" -ge 18 ] || die "the oci suite needs PostgreSQL 18 or later (extension_control_path); this is $PG_MAJOR"
ensure_packages umoci skopeo docker-registry python3-yaml
PAGE=$ROOT/docs/kubernetes.md
MANIFESTS=$ROOT/test/servers/manifests
WORK=$SERVERS/$SUITE_NAME
REGISTRY_PORT=26589
VERSION=$(control_version)
rm -rf "$WORK" && mkdir -p "$WORK" && chmod 755 "$BUILD" "$SERVERS" "$WORK"

# The value at path $2 (Python subscripts, such as ["spec"]["name"]) of the YAML file $1; lists print a line an item.
manifest() {
  python3 - "$1" "$2" <<'EOF'
import sys, yaml
value = eval("doc" + sys.argv[2], {"doc": yaml.safe_load(open(sys.argv[1]))})
print("\n".join(map(str, value)) if isinstance(value, list) else value)
EOF
}

# The ```sh blocks of the page, each as one NUL-terminated text, skipping those marked "not run" as
# the docs suite does.
page_blocks() {
  python3 - "$PAGE" <<'EOF'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
i = 0
while i < len(lines):
    if lines[i].strip() == "```sh":
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        j = i + 1
        while lines[j].strip() != "```":
            j += 1
        if not re.search(r"<!--\s*not run:", before):
            sys.stdout.write("\n".join(lines[i + 1 : j]) + "\0")
        i = j
    i += 1
EOF
}

# Pulls image reference $1 with skopeo into a directory, unpacks its layers with tar into $2 (made
# anew), and prints the image's config as JSON.
unpack() {
  local blobs=$WORK/pulled layer
  rm -rf "$blobs" "$2" && mkdir -p "$2"
  skopeo copy -q "$1" "dir:$blobs" >/dev/null || return 1
  for layer in $(python3 -c 'import json,sys; print(" ".join(l["digest"].split(":")[1] for l in json.load(open(sys.argv[1]))["layers"]))' "$blobs/manifest.json"); do
    tar -xzf "$blobs/$layer" -C "$2" || return 1
  done
  skopeo inspect --config "$1"
}

# The label $2 of the image config JSON in file $1.
label() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["config"]["Labels"][sys.argv[2]])' "$1" "$2"
}

section "the system's snowflake files moved away (put back at exit)"
SHAREDIR=$("$PG_CONFIG" --sharedir)/extension
LIBDIR=$("$PG_CONFIG" --pkglibdir)
mkdir -p "$WORK/system"
mv "$SHAREDIR"/snowflake* "$LIBDIR/snowflake.so" "$WORK/system/"
CLEANUPS+=("mv '$WORK'/system/snowflake* '$SHAREDIR/' && mv '$SHAREDIR/snowflake.so' '$LIBDIR/'")
check "PostgreSQL $PG_MAJOR itself has no snowflake now" not compgen -G "$SHAREDIR/snowflake*"

section "before PostgreSQL 18, scripts/oci.sh refuses and says why"
check "PG_MAJOR=17: refused, naming extension_control_path" \
  bash -c "PG_MAJOR=17 bash '$ROOT/scripts/oci.sh' 2>&1 | grep -q 'extension_control_path came in PostgreSQL 18'"

section "a registry on 127.0.0.1:$REGISTRY_PORT"
printf '%s\n' "version: 0.1" "log: {level: error}" "storage: {filesystem: {rootdirectory: $WORK/registry}}" \
  "http: {addr: '127.0.0.1:$REGISTRY_PORT'}" >"$WORK/registry.yml"
docker-registry serve "$WORK/registry.yml" >"$WORK/registry.log" 2>&1 &
REGISTRY_PID=$!
CLEANUPS+=("kill $REGISTRY_PID; rm -f /etc/containers/registries.conf.d/snowflake-oci-suite.conf")
# The local registry speaks plain HTTP; a real one has TLS and needs no such line.
mkdir -p /etc/containers/registries.conf.d
printf '[[registry]]\nlocation = "127.0.0.1:%s"\ninsecure = true\n' "$REGISTRY_PORT" \
  >/etc/containers/registries.conf.d/snowflake-oci-suite.conf
check "the registry answers" wait_for 30 bash -c "</dev/tcp/127.0.0.1/$REGISTRY_PORT"

section "the page's shell blocks, as written (the tag and the registry set to this run's)"
DISTRIBUTION=$(. /etc/os-release && echo "${VERSION_CODENAME:-${VERSION_ID:-unknown}}")
TAG=$VERSION-$PG_MAJOR-$DISTRIBUTION
REGISTRY=127.0.0.1:$REGISTRY_PORT/myteam
n=0
while IFS= read -r -d '' block; do
  n=$((n + 1))
  block=$(sed -E "s|^TAG=[^ ]*|TAG=$TAG|; s|^REGISTRY=[^ ]*|REGISTRY=$REGISTRY|" <<<"$block")
  check "block $n of docs/kubernetes.md runs" bash -euo pipefail -c "cd '$ROOT' && $block"
done < <(page_blocks)
check "the page has shell blocks" [ "$n" -gt 0 ]
CURRENT=docker://$REGISTRY/snowflake:$TAG

section "the last release's image ($LAST_RELEASE), built with this checkout's scripts/oci.sh"
release_source "$WORK/previous-src"
PREVIOUS=$(bash "$ROOT/scripts/oci.sh" --source "$WORK/previous-src" --output "$WORK/previous-layout" | tail -1)
check "it is tagged $LAST_RELEASE-$PG_MAJOR-$DISTRIBUTION" [ "${PREVIOUS##*:}" = "$LAST_RELEASE-$PG_MAJOR-$DISTRIBUTION" ]

section "both pulled with skopeo and unpacked with tar where CloudNativePG mounts them"
EXT_NAME=$(manifest "$MANIFESTS/cloudnativepg.yaml" '["spec"]["postgresql"]["extensions"][0]["name"]')
MOUNT=$WORK/extensions/$EXT_NAME
unpack "$CURRENT" "$WORK/current" >"$WORK/current.json"
unpack "$PREVIOUS" "$WORK/previous" >"$WORK/previous.json"
check "the image holds the library, the control file, the SQL scripts and the license, and nothing else" \
  [ "$(cd "$WORK/current" && find . -type f | sort | tr '\n' ' ')" = \
  "$(cd "$WORK/system" && { echo ./licenses/snowflake/LICENSE; echo ./lib/snowflake.so;
    ls snowflake* | grep -v '\.so$' | sed 's|^|./share/extension/|'; } | sort | tr '\n' ' ')" ]
check "its library is this build's" cmp -s "$WORK/current/lib/snowflake.so" "$WORK/system/snowflake.so"
check "labels: version $VERSION, license PostgreSQL" \
  [ "$(label "$WORK/current.json" org.opencontainers.image.version) $(label "$WORK/current.json" org.opencontainers.image.licenses)" = "$VERSION PostgreSQL" ]
check "labels: PostgreSQL $PG_MAJOR, $DISTRIBUTION" \
  [ "$(label "$WORK/current.json" io.cloudnativepg.image.base.pgmajor) $(label "$WORK/current.json" io.cloudnativepg.image.base.os)" = "$PG_MAJOR $DISTRIBUTION" ]
check "it runs as no user of the system (65532), on linux/$(dpkg --print-architecture)" \
  python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); sys.exit(not (c["config"]["User"] == "65532:65532" and c["os"] == "linux" and c["architecture"] == sys.argv[2]))' \
  "$WORK/current.json" "$(dpkg --print-architecture)"
check "the last release's image says $LAST_RELEASE" [ "$(label "$WORK/previous.json" org.opencontainers.image.version)" = "$LAST_RELEASE" ]

# Mounts unpacked image $1 at the mount point: read-only to the server, as an image volume is.
mount_image() {
  rm -rf "$MOUNT" && mkdir -p "$(dirname "$MOUNT")" && cp -a "$WORK/$1" "$MOUNT" && chown -R root: "$MOUNT" &&
    chmod -R a-w "$MOUNT"
}

section "instance orders-1 on the last release's image"
DATABASE=$(manifest "$MANIFESTS/cloudnativepg-database.yaml" '["spec"]["name"]')
PARAMETERS=$(python3 -c 'import sys, yaml
for k, v in yaml.safe_load(open(sys.argv[1]))["spec"]["postgresql"]["parameters"].items(): print(f"{k} = {v!r}")' \
  "$MANIFESTS/cloudnativepg.yaml")
mapfile -t PARAMETERS <<<"$PARAMETERS"
mount_image previous
server_init orders 26580 "shared_preload_libraries = '$(manifest "$MANIFESTS/cloudnativepg.yaml" '["spec"]["postgresql"]["shared_preload_libraries"]' | paste -sd,)'" \
  "extension_control_path = '\$system:$MOUNT/share'" "dynamic_library_path = '\$libdir:$MOUNT/lib'" \
  "snowflake.node_check_interval = '2s'" "${PARAMETERS[@]}"
server_start_on_host orders orders-1
sql orders "CREATE DATABASE $DATABASE" >/dev/null
SERVER_DATABASE=$DATABASE
for ext in $(manifest "$MANIFESTS/cloudnativepg-database.yaml" '["spec"]["extensions"]' | sed -n "s/.*'name': '\([a-z_]*\)'.*/\1/p"); do
  sql orders "CREATE EXTENSION $ext" >/dev/null
done
check "CREATE EXTENSION made $LAST_RELEASE, from the image" \
  [ "$(sql orders "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$LAST_RELEASE" ]
check "the postmaster mapped the image's library" grep -q "$MOUNT/lib/snowflake.so" "/proc/$(head -1 "${SERVER_DIR[orders]}/data/postmaster.pid")/maps"
sql orders "CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int);
  INSERT INTO items (n) SELECT g FROM generate_series(1, 5000) g" >/dev/null
check "5,000 IDs on node 1 (host name orders-1)" [ "$(sql orders "SELECT count(DISTINCT (snowflake_parse(id)).node) || ':' || min((snowflake_parse(id)).node) FROM items")" = "1:1" ]

section "this image in its place, then ALTER EXTENSION snowflake UPDATE"
server_stop orders
mount_image current
server_start_on_host orders orders-1
sql orders "ALTER EXTENSION snowflake UPDATE" >/dev/null
check "the extension is at $VERSION" [ "$(sql orders "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$VERSION" ]
sql orders "INSERT INTO items (n) SELECT g FROM generate_series(5001, 10000) g" >/dev/null
check "10,000 rows, every ID distinct, the new ones above the old" [ "$(sql orders "SELECT count(DISTINCT id) || ' ' ||
  ((SELECT min(id) FROM items WHERE n > 5000) > (SELECT max(id) FROM items WHERE n <= 5000)) FROM items")" = "10000 true" ]
check "snowflake_stats(): node 1, state ok, IDs counted" \
  [ "$(sql orders "SELECT node || ' ' || state || ' ' || (ids_issued >= 5000) FROM snowflake_stats()")" = "1 ok true" ]
check "the node check runs in $DATABASE and finds node 1 free" wait_for 30 node_check_is orders ok
check "a fresh database gets $VERSION" [ "$(SERVER_DATABASE=postgres sql orders "CREATE EXTENSION snowflake; SELECT extversion FROM pg_extension WHERE extname = 'snowflake'")" = "$VERSION" ]
server_stop orders

section "what a user sees without the image, or with one for another major"
# Starts a server of major $2 on the image mounted now (none: the paths lead nowhere) and prints its log.
failed_start() {
  local name=$1 major=$2
  PGB=/usr/lib/postgresql/$major/bin server_init "$name" 26581 "shared_preload_libraries = 'snowflake'" \
    "extension_control_path = '\$system:$MOUNT/share'" "dynamic_library_path = '\$libdir:$MOUNT/lib'"
  ! PGB=/usr/lib/postgresql/$major/bin server_start "$name" >/dev/null 2>&1
  cat "${SERVER_DIR[$name]}/log"
}
rm -rf "$MOUNT"
failed_start missing "$PG_MAJOR" >"$WORK/missing.log"
check "no image: the start fails with FATAL could not access file \"snowflake\"" \
  grep -q 'FATAL:  could not access file "snowflake": No such file or directory' "$WORK/missing.log"
sed -n 's/^[0-9-]* [0-9:.]* [A-Z]* \[[0-9]*\] //p' "$WORK/missing.log" | grep -m2 -E 'FATAL|HINT'
mount_image current
OTHER=$(ls -d /usr/lib/postgresql/*/bin/postgres 2>/dev/null | cut -d/ -f5 | grep -vx "$PG_MAJOR" | tail -1 || true)
if [ -n "$OTHER" ]; then
  failed_start other "$OTHER" >"$WORK/other.log"
  check "an image for $PG_MAJOR on PostgreSQL $OTHER: FATAL incompatible library, version mismatch" \
    grep -q "FATAL:  incompatible library \"$MOUNT/lib/snowflake.so\": version mismatch" "$WORK/other.log"
  sed -n 's/^[0-9-]* [0-9:.]* [A-Z]* \[[0-9]*\] //p' "$WORK/other.log" | grep -m2 -E 'FATAL|DETAIL'
else
  echo "no other major's server here: the image for another major is checked where one is (the PostgreSQL 19 chroot)"
fi
section
finish
