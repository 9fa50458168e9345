# Sourced by bench scripts (through setup.sh, or alone when they build their own schema): `blimp` (the release build,
# made or brought up to date; BLIMP=path uses that binary instead), a work folder "$work", and a throwaway PostgreSQL
# in it with its default durability (fsync on), given CLUSTER_SETTINGS. Processes added to `pids` are stopped, and the
# cluster and folder removed, on exit.
source scripts/postgres.sh
blimp=${BLIMP:-.build/release/blimp}
# Always build (a no-op when up to date): a release binary left from older sources would be measured otherwise.
[ -n "${BLIMP:-}" ] || swift build -c release --product blimp

work=$(mktemp -d /tmp/blimp-bench-XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    stop_cluster "$work/pg"
    rm -rf "$work"
}
trap cleanup EXIT

start_cluster "$work/pg" "${CLUSTER_SETTINGS:-}"
