#!/usr/bin/env bash
# The console on a large app: how fast `blimp api`'s /console pages answer with CHANNELS channels in the database
# (target: p99 under 100 ms at 1,000,000). Seeds app `bench` with SQL (bench/console-seed.sql: channels, named users,
# tags, Live Activities, push-to-start tokens, finished pushes with their delivery outcomes) and a second app with
# OTHER channels of the same names, tags and named users, then VACUUM ANALYZE; starts `blimp api` with an admin token,
# signs in through the login form as the admin, waits until the overview shows the seeded channel count, and requests
# 14 pages (overview, channel searches, a channel, activity names, a name, pushes, a push and its live JSON, compose
# and a compose preview) one after another on one kept-alive connection, in rounds of one request per page: REQUESTS
# rounds, and more until one of the API's janitor passes (once a minute: the outcome trim, the console's rollups) has
# finished during them, at most 3 minutes. Prints the seeding time and a table of latencies (from sending the
# request to the last byte of the answer) with PASS or FAIL against 100 ms at p99. Before timing, the compose
# preview's audience count is checked against a count in SQL, and the other app's channel must not be found.
#
#   bench/console.sh [CHANNELS=1000000] [REQUESTS=200] [OTHER=100000]
#
# Release build (BLIMP=path overrides, e.g. BLIMP=.build/debug/blimp); PostgreSQL with fsync on and its default
# settings. SEED_ONLY=1 stops after seeding and prints the row counts. Results go in docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
channels=${1:-1000000}
requests=${2:-200}
others=${3:-100000}
export BLIMP_ADMIN_TOKEN=${BLIMP_ADMIN_TOKEN:-$(openssl rand -hex 24)}
source bench/setup.sh
app_key=$(field app_key)
other=$("$blimp" apps create --name other --bundle-id com.example.other --apns-key-file "$work/key.p8" \
    --apns-key-id $kid --apns-team-id $team --apns-environment sandbox)
other_key=$(python3 -c "import json,sys; print(json.load(sys.stdin)['app_key'])" <<<"$other")
sql() { psql -qtAX "$DATABASE_URL" -c "$1"; }
app_id=$(sql "SELECT id FROM apps WHERE app_key = '$app_key'")
other_id=$(sql "SELECT id FROM apps WHERE app_key = '$other_key'")

echo "console: $channels channels (and $others in another app), at least $requests requests per page; $postgres_line"
start=$(date +%s.%N)
psql -qX "$DATABASE_URL" -v app="$app_id" -v n="$channels" -f bench/console-seed.sql
psql -qX "$DATABASE_URL" -v app="$other_id" -v n="$others" -f bench/console-seed.sql
seeded=$(date +%s.%N)
psql -qX "$DATABASE_URL" -c "VACUUM ANALYZE"
end=$(date +%s.%N)
printf 'seeding: %.0f s (inserts %.0f s, VACUUM ANALYZE %.0f s), database %s\n' "$(python3 -c "print($end - $start)")" \
    "$(python3 -c "print($seeded - $start)")" "$(python3 -c "print($end - $seeded)")" \
    "$(sql "SELECT pg_size_pretty(pg_database_size(current_database()))")"
psql -X "$DATABASE_URL" -c "
SELECT a.name AS app,
       (SELECT count(*) FROM channels c WHERE c.app_id = a.id) AS channels,
       (SELECT count(*) FROM named_users u WHERE u.app_id = a.id) AS named_users,
       (SELECT count(*) FROM channel_tags t WHERE t.app_id = a.id) AS channel_tags,
       (SELECT count(*) FROM live_activities l WHERE l.app_id = a.id) AS live_activities,
       (SELECT count(*) FROM push_to_start_tokens s WHERE s.app_id = a.id) AS push_to_start,
       (SELECT count(*) FROM pushes p WHERE p.app_id = a.id) AS pushes,
       (SELECT count(*) FROM delivery_outcomes o WHERE o.app_id = a.id) AS outcomes
FROM apps a ORDER BY a.id"
[ "${SEED_ONLY:-0}" = 1 ] && exit 0

# What the pages show: a channel with a named user, outcomes and a push-to-start token; another app's channel; the
# newest push of match-7; and the compose preview's expected reach (update to match-7, tag device/plan-3).
channel=$(sql "SELECT o.channel_id FROM delivery_outcomes o JOIN channels c USING (app_id, channel_id)
               JOIN push_to_start_tokens s USING (app_id, channel_id)
               WHERE o.app_id = $app_id AND c.named_user_id IS NOT NULL GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
named_user=$(sql "SELECT named_user_id FROM channels WHERE app_id = $app_id AND channel_id = '$channel'")
prefix=$(sql "SELECT left(push_address, 4) FROM channels WHERE app_id = $app_id AND channel_id = '$channel'")
foreign=$(sql "SELECT channel_id FROM channels WHERE app_id = $other_id ORDER BY channel_id LIMIT 1")
push=$(sql "SELECT push_id FROM pushes WHERE app_id = $app_id AND activity_name = 'match-7' ORDER BY accepted_at DESC LIMIT 1")
reach() {
    sql "SELECT count(*) FROM live_activities la
         WHERE la.app_id = $app_id AND la.name = 'match-7' AND la.state = 'active' AND la.started_at > now() - interval '8 hours'
           AND (EXISTS (SELECT 1 FROM channel_tags t WHERE t.app_id = la.app_id AND t.channel_id = la.channel_id
                        AND t.tag_group = 'device' AND t.tag = 'plan-3')
                OR EXISTS (SELECT 1 FROM channels n JOIN named_user_tags u USING (app_id, named_user_id)
                           WHERE n.app_id = la.app_id AND n.channel_id = la.channel_id AND u.tag_group = 'device' AND u.tag = 'plan-3'))"
}
expected=$(reach)

port=$(loopback_ports 1)
start_api "$port"
status=0
python3 - "$port" "$app_key" "$channels" "$requests" "$channel" "$named_user" "$prefix" "$foreign" "$push" "$expected" <<'PY' || status=$?
import html, http.client, math, os, re, subprocess, sys, time, urllib.parse
port, app_key, channels, requests = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
channel, named_user, prefix, foreign, push, expected = sys.argv[5:11]
admin_token = os.environ["BLIMP_ADMIN_TOKEN"]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
cookies = {}

def request(method, path, form=None):
    headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    started = time.perf_counter()
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    text = response.read().decode("utf-8", "replace")
    elapsed = (time.perf_counter() - started) * 1000
    for header, value in response.getheaders():
        if header.lower() == "set-cookie":
            name, _, rest = value.partition("=")
            value = rest.split(";")[0]
            if value:
                cookies[name.strip()] = value
            else:
                cookies.pop(name.strip(), None)
    return response.status, response.getheader("Location"), text, elapsed

def csrf(page):
    match = re.search(r'name="csrf"[^>]*value="([^"]*)"', page) or re.search(r'value="([^"]*)"[^>]*name="csrf"', page)
    if not match:
        sys.exit("bench: no csrf field in the page")
    return html.unescape(match.group(1))

def element(page, id):
    match = re.search(r'id="%s"[^>]*>(.*?)<' % re.escape(id), page, re.S)
    return html.unescape(match.group(1)).strip() if match else None

status, _, page, _ = request("GET", "/console/login")
if status != 200:
    sys.exit(f"bench: GET /console/login answered {status}: is the console in this build?")
status, location, page, _ = request("POST", "/console/login", {"admin_token": admin_token, "csrf": csrf(page)})
if status != 303 or "blimp_session" not in cookies:
    sys.exit(f"bench: admin login answered {status} (Location {location}): {page[:300]}")

app = f"/console/app/{app_key}"
# The overview counts channels from the janitor's rollups: wait until they have the seeded app.
deadline = time.monotonic() + 300
while True:
    status, _, page, _ = request("GET", app)
    count = element(page, "channel-count") if status == 200 else None
    if count is not None and re.sub(r"\D", "", count) == str(channels):
        break
    if time.monotonic() > deadline:
        sys.exit(f"bench: the overview still shows {count!r} channels (status {status}) after 5 minutes")
    time.sleep(2)
waited = 300 - (deadline - time.monotonic())

status, _, page, _ = request("GET", app + "/compose")
token = csrf(page)
preview = {"csrf": token, "action": "preview", "event": "update", "name": "match-7", "priority": "5",
           "content_state": '{"home": 2, "away": 1, "minute": 67}', "alert_title": "", "alert_body": "",
           "attributes_type": "", "attributes": "", "stale_date": "", "dismissal_date": "", "relevance_score": "",
           "match": "all", "aud_kind_0": "tag", "aud_group_0": "device", "aud_value_0": "plan-3"}
for i in range(1, 5):
    preview.update({f"aud_kind_{i}": "", f"aud_group_{i}": "", f"aud_value_{i}": ""})
for j in range(3):
    preview.update({f"not_kind_{j}": "", f"not_group_{j}": "", f"not_value_{j}": ""})

q = urllib.parse.quote
pages = [
    ("overview", "GET", app, None, 'id="channel-count"'),
    ("channels", "GET", app + "/channels", None, 'class="channel-link'),
    ("channels by tag", "GET", app + "/channels?by=tag&group=device&q=plan-3", None, 'class="channel-link'),
    ("channels by token prefix", "GET", app + "/channels?by=token&group=&q=" + prefix, None, 'class="channel-link'),
    ("channels by named user", "GET", app + "/channels?by=named_user&group=&q=" + q(named_user), None, 'class="channel-link'),
    ("channels by channel id", "GET", app + "/channels?by=channel&group=&q=" + channel, None, 'class="channel-link'),
    ("channel page", "GET", app + "/channels/" + channel, None, 'id="live-activities"'),
    ("activities", "GET", app + "/activities", None, 'class="activity-link'),
    ("activity name page", "GET", app + "/activities/match-7", None, 'id="activity-pushes"'),
    ("pushes", "GET", app + "/pushes", None, 'class="push-link'),
    ("push page", "GET", app + "/pushes/" + push, None, 'id="push-state"'),
    ("push live JSON", "GET", app + f"/pushes/{push}/live", None, '"'),
    ("compose", "GET", app + "/compose", None, 'id="compose"'),
    ("compose preview (tag audience)", "POST", app + "/compose", preview, 'id="audience-count"'),
]

# What must hold before timing: every page answers 200 with its element, a named user's search lists its two channels
# and no other app's, another app's channel is not found here, and the preview counts what SQL counts.
failures = []
for label, method, path, form, marker in pages:
    status, _, page, _ = request(method, path, form)
    if status != 200 or marker not in page:
        sys.exit(f"bench: {label} ({method} {path}) answered {status} without {marker}: {page[:500]}")
_, _, page, _ = request("GET", app + "/channels?by=named_user&group=&q=" + q(named_user))
found = set(re.findall(r'/channels/([0-9a-f-]{36})', page))
if len(found) != 2:
    failures.append(f"named user {named_user}: {len(found)} channels listed, expected 2")
status, _, page, _ = request("GET", app + "/channels/" + foreign)
if status != 404:
    failures.append(f"another app's channel answered {status}, expected 404")
_, _, page, _ = request("GET", app + "/channels?by=channel&group=&q=" + foreign)
if "/channels/" + foreign in page:
    failures.append("the channel-id search found another app's channel")
_, _, page, _ = request("POST", app + "/compose", preview)
shown = element(page, "audience-count")
if shown is None or re.sub(r"\D", "", shown) != expected:
    failures.append(f"preview audience count {shown!r}, SQL counts {expected}")

def percentile(sorted_values, q):
    # Nearest rank: the smallest value with at least q of the values at or below it.
    return sorted_values[max(0, min(len(sorted_values) - 1, math.ceil(len(sorted_values) * q) - 1))]

# Timed in rounds, each page once per round, so that whatever else runs (the janitor's passes, once a minute: the
# outcome trim and the rollups) falls on every page alike; at least REQUESTS rounds, and on until a janitor pass has
# finished within them (at most 3 minutes), so that the figures include one.
def janitor_mark():
    return subprocess.run(["psql", "-qtAX", os.environ["DATABASE_URL"], "-c", "SELECT max(computed_at) FROM app_rollups"],
                          capture_output=True, text=True, check=True).stdout.strip()

print(f"signed in; the overview showed {channels:,} channels after {waited:.0f} s; preview audience {shown} (SQL: {expected})")
times = {label: [] for label, *_ in pages}
for label, method, path, form, marker in pages:
    request(method, path, form)
rounds, passes, mark = 0, 0, janitor_mark()
started = checked = time.monotonic()
while rounds < requests or (passes == 0 and time.monotonic() - started < 180):
    for label, method, path, form, marker in pages:
        status, _, _, elapsed = request(method, path, form)
        if status != 200:
            sys.exit(f"bench: {label} answered {status} while timed")
        times[label].append(elapsed)
    rounds += 1
    if time.monotonic() - checked > 5 or rounds == requests:
        checked, latest = time.monotonic(), janitor_mark()
        passes, mark = passes + (latest != mark), latest
print(f"{rounds} rounds in {time.monotonic() - started:.0f} s; janitor passes finished meanwhile: {passes}")
print()
print("| page | requests | p50 ms | p90 ms | p99 ms | max ms | p99 < 100 ms |")
print("|---|---|---|---|---|---|---|")
all_pass = True
for label, *_ in pages:
    values = sorted(times[label])
    p99 = percentile(values, 0.99)
    all_pass &= p99 < 100
    print(f"| {label} | {len(values)} | {percentile(values, 0.5):.1f} | {percentile(values, 0.9):.1f} | {p99:.1f} | "
          f"{values[-1]:.1f} | {'PASS' if p99 < 100 else 'FAIL'} |")
print()
for failure in failures:
    print("CHECK FAILED:", failure)
print("all pages PASS" if all_pass else "some pages FAIL", "; checks", "FAILED" if failures else "passed")
sys.exit(1 if failures else 0)
PY
echo "preview reach in SQL after the run: $(reach) (before: $expected)"
exit $status
