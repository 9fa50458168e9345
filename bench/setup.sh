# Sourced by the bench scripts after they read their arguments: what bench/cluster.sh makes (the release `blimp`, a
# work folder, a throwaway PostgreSQL with its default durability), the schema, and one app, `bench`, whose
# APNs key is "$work/key.p8" ($kid, $team); `field NAME` reads its credentials. `start_api PORT` runs `blimp api`,
# `start_simulator PORT ADMIN_PORT [FLAGS]` `blimp apns-sim` trusting that key, and `start_worker SIM_PORT [FLAGS]`
# a `blimp worker` sending to it, each until the script ends; `loopback_ports N` prints N distinct free ports, and
# `wait_for_port PORT` waits until something listens there. Processes added to `pids` are stopped, and the cluster
# removed, on exit.
CLUSTER_SETTINGS="-c max_connections=200" source bench/cluster.sh
export BLIMP_SECRET_KEY=$(openssl rand -base64 32)
"$blimp" migrate >/dev/null
kid=BENCHKEY01 team=BENCHTEAM1
openssl ecparam -name prime256v1 -genkey -noout 2>/dev/null | openssl pkcs8 -topk8 -nocrypt -out "$work/key.p8"
app=$("$blimp" apps create --name bench --bundle-id com.example.bench --apns-key-file "$work/key.p8" \
    --apns-key-id $kid --apns-team-id $team --apns-environment sandbox)
field() { python3 -c "import json,sys; print(json.load(sys.stdin)['$1'])" <<<"$app"; }

start_api() {
    # A load test: every simulated device comes from 127.0.0.1, and pushes come as fast as they can, so no rate limits
    # (BENCH_API_LIMITS replaces these flags, e.g. to measure a limit that admits everything).
    # shellcheck disable=SC2086
    "$blimp" api --port "$1" --log-level warning \
        ${BENCH_API_LIMITS:---channel-creation-rate-limit-per-address 0 --push-rate-limit 0 --server-rate-limit 0} &
    pids+=($!)
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$1/ready" >/dev/null && break; sleep 0.1; done
}

start_simulator() {
    local port=$1 admin_port=$2
    shift 2
    "$blimp" apns-sim --port "$port" --admin-port "$admin_port" --state-dir "$work/sim" --trust-key "$kid:$team:$work/key.p8" \
        "$@" >/dev/null 2>>"$work/apns-sim.log" &
    pids+=($!)
    wait_for_port "$port"
}

start_worker() {
    local port=$1
    shift
    BLIMP_APNS_URL="https://127.0.0.1:$port" BLIMP_APNS_CA_FILE="$work/sim/ca.pem" "$blimp" worker --log-level warning "$@" &
    pids+=($!)
}

# Distinct free ports, from the kernel.
loopback_ports() {
    python3 -c '
import socket, sys
sockets = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])' "$1"
}

wait_for_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return; sleep 0.1; done; }

postgres_line="PostgreSQL $("$(postgres_bindir)/postgres" --version | awk '{print $3}') with fsync on; $(nproc) cores"
