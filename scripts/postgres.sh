# Shared set-up for scripts/run and scripts/test: system packages and a local PostgreSQL cluster.
# Source it; it defines functions only.

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs the Debian packages Blimp needs, if any is missing.
install_system_packages() {
    local missing=()
    for package in postgresql libpq-dev libssl-dev libcurl4-openssl-dev libjemalloc-dev python3 python3-pip ${BLIMP_TEST_PACKAGES:-}; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "blimp: installing ${missing[*]}" >&2
        as_root apt-get update -qq
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
    command -v swift >/dev/null || { echo "blimp: swift is not on PATH (install Swift 6.3 from swift.org: the suite runs on 6.3.1, and the dependencies need 6.2 or later)" >&2; exit 1; }
}

# The official Airship Python library, openapi-core, schemathesis, h2, selenium and PyYAML, which the compatibility,
# specification, interop, console browser and deploy files' tests drive.
install_python_packages() {
    python3 -c "import urbanairship, uaconnect, standardwebhooks, openapi_core, schemathesis, h2, selenium, yaml" 2>/dev/null && return
    echo "blimp: installing the urbanairship, uaconnect, standardwebhooks, openapi-core, schemathesis, h2, selenium and PyYAML Python libraries" >&2
    python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore urbanairship uaconnect standardwebhooks openapi-core schemathesis h2 selenium pyyaml 2>/dev/null \
        || python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore --break-system-packages \
            urbanairship uaconnect standardwebhooks openapi-core schemathesis h2 selenium pyyaml
}

# The newest installed PostgreSQL server's bin directory.
postgres_bindir() {
    local initdb
    initdb=$(ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -n 1)
    [ -n "$initdb" ] || { echo "blimp: no PostgreSQL server found under /usr/lib/postgresql" >&2; exit 1; }
    dirname "$initdb"
}

# Runs a PostgreSQL server command as the cluster's owner: the postgres user when we are root
# (PostgreSQL refuses to run as root), ourselves otherwise.
as_cluster_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# Prints a loopback TCP port nobody listens on, from 54320 up.
free_port() {
    local port
    for port in $(seq 54320 54999); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
    done
    echo "blimp: no free port in 54320-54999" >&2; exit 1
}

# start_cluster DIR [SERVER OPTIONS]: creates the cluster in DIR on first use, starts it on a free
# loopback port and exports DATABASE_URL for its `blimp` database. A running cluster is reused.
start_cluster() {
    local dir=$1 options=${2:-} bin port
    bin=$(postgres_bindir)
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    as_cluster_owner test -w "$dir" || {
        echo "blimp: the postgres user cannot write $dir (is a parent folder private?); set DATABASE_URL instead" >&2
        exit 1
    }
    if [ ! -f "$dir/PG_VERSION" ]; then
        local log
        log=$(as_cluster_owner "$bin/initdb" -D "$dir" -U blimp --auth=trust -E UTF8 --locale=C.UTF-8 2>&1) || {
            echo "$log" >&2; exit 1
        }
    fi
    if as_cluster_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
        port=$(sed -n 4p "$dir/postmaster.pid")
    else
        port=$(free_port)
        as_cluster_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -s start \
            -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $options" || {
            tail -n 20 "$dir/server.log" >&2; exit 1
        }
    fi
    "$bin/psql" -h 127.0.0.1 -p "$port" -U blimp -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'blimp'" |
        grep -q 1 || "$bin/createdb" -h 127.0.0.1 -p "$port" -U blimp blimp
    export DATABASE_URL="postgres://blimp@127.0.0.1:$port/blimp"
}

# stop_cluster DIR: a fast, clean shutdown.
stop_cluster() {
    as_cluster_owner "$(postgres_bindir)/pg_ctl" -D "$1" -w -s -m fast stop 2>/dev/null || true
}
