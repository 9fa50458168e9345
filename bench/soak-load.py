"""The clients of bench/soak.sh, one kind a process: `python3 bench/soak-load.py PORT APP_KEY MASTER_SECRET KIND ...`,
PORT being the api's.

  pushes SECONDS RATE NAMES PER_NAME   Live Activity updates, each to one seeded channel ({"ios_channel": id}), RATE a
                                       second; prints "status push_id attempts" for each push once finally answered
  fanouts SECONDS EVERY NAMES          an update to "all" of one name (the names in turn) every EVERY seconds, the same
  schedules SECONDS EVERY NAMES        a one-time schedule every EVERY seconds (POST /api/schedules), firing an update
                                       to one seeded channel 30 s later; prints "status schedule_id time attempts"
  console SECONDS EVERY STATUS_FILE    signs in to the console with the master secret and reads four pages every EVERY
                                       seconds; counts the answers by status
  events STATUS_FILE                   reads the event stream (POST /api/events) from its earliest event until stopped,
                                       reconnecting from the last offset it saw after any error or end
  webhook HOOK_PORT STATUS_FILE        an endpoint on 127.0.0.1:HOOK_PORT that answers every delivery 200, until stopped

Pushes are sent with an Idempotency-Key and sent again with the same key after a 503 (after its Retry-After) or no
answer, for up to 5 minutes. Schedules are retried alike (the Schedules API takes no key: each has a name of its own,
so one created twice shows). The status files are JSON, written every second.
"""
import base64, collections, concurrent.futures, datetime, hashlib, html, http.client, json, os, re, sys, threading, time
import urllib.parse, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "application/vnd.urbanairship+json; version=3"
GIVE_UP = 300


def seeded_channel(i):
    """The channel id bench/soak.sh seeds for activity i (md5('soak/' || i)::uuid in SQL)."""
    return str(uuid.UUID(hashlib.md5(f"soak/{i}".encode()).hexdigest()))


def write_status(path, status):
    with open(path + ".tmp", "w") as f:
        json.dump(status, f)
    os.replace(path + ".tmp", path)


def keep_writing_status(path, status, lock):
    """Writes `status` (under `lock`) to `path` every second, in a thread of its own, for the soak to read at the end."""
    def writer():
        while True:
            with lock:
                write_status(path, status)
            time.sleep(1)
    threading.Thread(target=writer, daemon=True).start()


class API:
    def __init__(self, port, app_key, master_secret):
        self.port = port
        credentials = base64.b64encode(f"{app_key}:{master_secret}".encode()).decode()
        self.headers = {"Authorization": "Basic " + credentials, "Accept": VERSION, "Content-Type": "application/json"}

    def post(self, path, body, key=None):
        """POSTs until an answer other than 503 (or GIVE_UP seconds): (status, parsed body, attempts); status 0 when
        the last attempt got no answer."""
        headers = dict(self.headers, **({"Idempotency-Key": key} if key else {}))
        data, deadline, attempts = json.dumps(body), time.monotonic() + GIVE_UP, 0
        while True:
            attempts += 1
            try:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
                connection.request("POST", path, data, headers)
                response = connection.getresponse()
                answer = response.read()
                connection.close()
                if response.status != 503 or time.monotonic() > deadline:
                    try:
                        return response.status, json.loads(answer), attempts
                    except ValueError:
                        return response.status, {}, attempts
                wait = float(response.getheader("Retry-After") or 1)
            except (OSError, http.client.HTTPException):
                if time.monotonic() > deadline:
                    return 0, {}, attempts
                wait = 1
            time.sleep(min(max(wait, 0.1), 10))


def live_activity_update(audience, name, n):
    return {"audience": audience, "device_types": ["ios"], "notification": {"ios": {"live_activity": {
        "event": "update", "name": name, "priority": 5, "content_state": {"n": n}}}}}


def paced(seconds, every, send):
    """Calls send(i) for i = 0, 1, ... every `every` seconds for `seconds` seconds, each on a thread of its own (a
    retried push holds up none after it), then waits for them."""
    start, outputs, lock = time.monotonic(), [], threading.Lock()
    with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:
        i = 0
        while time.monotonic() - start < seconds:
            pool.submit(lambda i=i: print_line(lock, send(i)))
            i += 1
            time.sleep(max(0, start + i * every - time.monotonic()))


def print_line(lock, line):
    if line:
        with lock:
            print(line, flush=True)


def pushes(api, seconds, rate, names, per_name):
    activities = names * per_name
    def send(i):
        activity = (i * 7919) % activities + 1  # spread over the seeded activities
        body = live_activity_update({"ios_channel": seeded_channel(activity)}, f"name-{activity % names}", i)
        status, answer, attempts = api.post("/api/push", body, key=f"soak-user-{i}")
        return f"{status} {(answer.get('push_ids') or ['-'])[0]} {attempts}"
    paced(seconds, 1 / rate, send)


def fanouts(api, seconds, every, names):
    def send(i):
        status, answer, attempts = api.post("/api/push", live_activity_update("all", f"name-{i % names}", i), key=f"soak-all-{i}")
        return f"{status} {(answer.get('push_ids') or ['-'])[0]} {attempts}"
    paced(seconds, every, send)


def schedules(api, seconds, every, names):
    def send(i):
        due = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=31)).strftime("%Y-%m-%dT%H:%M:%S")
        activity = i + 1
        body = {"name": f"soak {i}", "schedule": {"scheduled_time": due},
                "push": live_activity_update({"ios_channel": seeded_channel(activity)}, f"name-{activity % names}", i)}
        status, answer, attempts = api.post("/api/schedules", body)
        return f"{status} {(answer.get('schedule_ids') or ['-'])[0]} {due} {attempts}"
    # The last schedule fires before the soak ends.
    paced(max(0, seconds - 40), every, send)


def console(port, app_key, master_secret, seconds, every, status_file):
    """The console as a browser keeps it: one kept-alive connection, its session cookie, sign-in again when sent to
    the sign-in page."""
    cookies, statuses, pages_by_status, sign_ins = {}, collections.Counter(), collections.Counter(), 0
    connection = None

    def request(method, path, form=None):
        nonlocal connection
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} if cookies else {}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            connection = None
            return 0, None, ""
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                value = rest.split(";")[0]
                if value:
                    cookies[name.strip()] = value
                else:
                    cookies.pop(name.strip(), None)
        return response.status, response.getheader("Location"), text

    def sign_in():
        nonlocal sign_ins
        status, _, page = request("GET", "/console/login")
        match = re.search(r'name="csrf"[^>]*value="([^"]*)"', page)
        if status != 200 or not match:
            return False
        status, _, _ = request("POST", "/console/login",
                               {"app_key": app_key, "master_secret": master_secret, "csrf": html.unescape(match.group(1))})
        sign_ins += status == 303
        return status == 303

    app = f"/console/app/{app_key}"
    pages = [app, app + "/pushes", app + "/activities", app + "/schedules"]
    start = last_write = time.monotonic()
    rounds = 0
    while time.monotonic() - start < seconds:
        for page in pages:
            status, location, _ = request("GET", page)
            if status in (302, 303) and location and "/login" in location and sign_in():
                status, _, _ = request("GET", page)
            statuses[status] += 1
            pages_by_status[f"{page.removeprefix(app) or '/'} {status}"] += 1
        rounds += 1
        if time.monotonic() - last_write >= 1:
            last_write = time.monotonic()
            write_status(status_file, {"statuses": statuses, "pages": pages_by_status, "sign_ins": sign_ins})
        time.sleep(max(0, start + rounds * every - time.monotonic()))
    write_status(status_file, {"statuses": statuses, "pages": pages_by_status, "sign_ins": sign_ins})


def events(api, status_file):
    """Reads the stream for ever. Offsets only grow, so an event at or below the last offset seen is a repeat."""
    state = {"events": 0, "repeats": 0, "connections": 0, "clean_ends": 0, "errors": 0, "statuses": collections.Counter(),
             "last_offset": None, "last_error": None, "types": collections.Counter()}
    last = None
    lock = threading.Lock()

    keep_writing_status(status_file, state, lock)
    headers = dict(api.headers, Accept="application/vnd.urbanairship+x-ndjson; version=3")
    while True:
        body = {"resume_offset": str(last)} if last is not None else {"start": "EARLIEST"}
        wait = 1
        try:
            # A keepalive comes at least every 10 s: a stream silent for 30 s is broken.
            connection = http.client.HTTPConnection("127.0.0.1", api.port, timeout=30)
            connection.request("POST", "/api/events", json.dumps(body), headers)
            response = connection.getresponse()
            with lock:
                state["connections"] += 1
                state["statuses"][response.status] += 1
            if response.status != 200:
                answer = response.read()
                with lock:
                    state["last_error"] = f"{response.status} {answer[:200].decode('utf-8', 'replace')}"
                wait = float(response.getheader("Retry-After") or 1)
            else:
                while True:
                    line = response.readline()
                    if not line:
                        with lock:
                            state["clean_ends"] += 1
                        break
                    line = line.strip()
                    if not line:
                        continue
                    event = json.loads(line)
                    offset = int(event["offset"])
                    with lock:
                        if last is not None and offset <= last:
                            state["repeats"] += 1
                        else:
                            state["events"] += 1
                            state["types"][event["type"]] += 1
                            last = offset
                            state["last_offset"] = str(offset)
                wait = 0.2
            connection.close()
        except (OSError, http.client.HTTPException, ValueError) as error:
            with lock:
                state["errors"] += 1
                state["last_error"] = f"{type(error).__name__}: {error}"[:200]
        time.sleep(min(wait, 10))


def webhook(hook_port, status_file):
    """Counts deliveries; a batch is sent again under the same webhook-id, so repeats are told by it."""
    state = {"deliveries": 0, "events": 0, "repeated_batches": 0, "repeated_events": 0}
    batches, lock = set(), threading.Lock()

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            count = len(json.loads(body).get("data", []))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()
            with lock:
                state["deliveries"] += 1
                batch = self.headers.get("webhook-id")
                if batch in batches:
                    state["repeated_batches"] += 1
                    state["repeated_events"] += count
                else:
                    batches.add(batch)
                    state["events"] += count

        def log_message(self, *args):
            pass

    keep_writing_status(status_file, state, lock)
    ThreadingHTTPServer(("127.0.0.1", hook_port), Receiver).serve_forever()


def main():
    port, app_key, master_secret, kind, args = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
    api = API(port, app_key, master_secret)
    if kind == "pushes":
        pushes(api, float(args[0]), float(args[1]), int(args[2]), int(args[3]))
    elif kind == "fanouts":
        fanouts(api, float(args[0]), float(args[1]), int(args[2]))
    elif kind == "schedules":
        schedules(api, float(args[0]), float(args[1]), int(args[2]))
    elif kind == "console":
        console(port, app_key, master_secret, float(args[0]), float(args[1]), args[2])
    elif kind == "events":
        events(api, args[0])
    elif kind == "webhook":
        webhook(int(args[0]), args[1])
    else:
        sys.exit(f"soak-load: unknown kind {kind}")


if __name__ == "__main__":
    main()
