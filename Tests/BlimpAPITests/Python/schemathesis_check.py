"""Schemathesis against docs/openapi.yaml: no 5xx, and every answer documented (status, content type, body, headers).

Run with BLIMP_URL (http://host:port), APP_KEY, APP_SECRET, MASTER_SECRET and CHANNEL_IDS (channels already
registered, comma-separated), against an API whose rate limits are off: the run sends several thousand requests.

It queues one push (so that push ids exist), writes a schemathesis.toml and runs `st run` (schemathesis 4.x) on the
document with it:
- the master secret for the server and Push APIs and the app secret for the device API: the `masterSecret` and
  `appSecret` security schemes, of which an operation gets the first its `security` list names;
- Airship's Accept header on every request;
- the registered channel ids, the app key and the push id in most generated path parameters, X-UA-Channel-ID
  headers and `channel_id` body fields, so that requests get past the lookups;
- the coverage, fuzzing and stateful phases, a fixed seed and a bounded number of examples per operation;
- the checks not_a_server_error (any 5xx, documented or not), status_code_conformance, content_type_conformance,
  response_schema_conformance and response_headers_conformance.
Then reads the run's NDJSON events, prints every failing case (method, URL, body, status, response, and a curl
command that repeats it) and a summary line, and exits non-zero on any failure or error.

Optional: SCHEMATHESIS_SEED (default 17), SCHEMATHESIS_MAX_EXAMPLES (per operation and phase, default 25),
SCHEMATHESIS_PHASES (default coverage,fuzzing,stateful), SCHEMATHESIS_WORKERS (default 1), SCHEMATHESIS_REPORT_DIR
(keep the generated configuration and the reports there, else a temporary folder), OPENAPI_DOCUMENT (another
document).
"""
import base64
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

DOCUMENT = os.environ.get("OPENAPI_DOCUMENT") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "../../../docs/openapi.yaml"))
ACCEPT = "application/vnd.urbanairship+json; version=3;"
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_schema_conformance", "response_headers_conformance"]

base = os.environ["BLIMP_URL"].rstrip("/")
key, app_secret, master = os.environ["APP_KEY"], os.environ["APP_SECRET"], os.environ["MASTER_SECRET"]
channels = [channel for channel in os.environ["CHANNEL_IDS"].split(",") if channel]
seed = int(os.environ.get("SCHEMATHESIS_SEED", "17"))
max_examples = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "25"))
phases = os.environ.get("SCHEMATHESIS_PHASES", "coverage,fuzzing,stateful").split(",")
# One worker: schemathesis's workers are threads, and on CPython 3.11 (seen on 3.11.7) generating recursive strategies
# in two threads at once can fail with "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905).
workers = os.environ.get("SCHEMATHESIS_WORKERS", "1")


def basic(secret):
    return "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()


def queue_push():
    """A queued push's id: an alert to the first channel (nothing sends it unless a worker runs)."""
    body = {"audience": {"ios_channel": channels[0]}, "device_types": ["ios"], "notification": {"alert": "schemathesis"}}
    request = urllib.request.Request(base + "/api/push", data=json.dumps(body).encode(), method="POST", headers={
        "Accept": ACCEPT, "Authorization": basic(master), "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["push_ids"][0]


def toml(value):
    """A TOML value: JSON's strings, numbers, booleans and arrays of them are TOML's too."""
    return json.dumps(value)


def config(push_ids):
    return "\n".join([
        f"base-url = {toml(base)}",
        f"seed = {seed}",
        f"workers = {toml(int(workers)) if workers.isdigit() else toml(workers)}",
        "warnings = false",
        "[headers]",
        f"Accept = {toml(ACCEPT)}",
        "[generation]",
        f"max-examples = {max_examples}",
        'database = "none"',
        # Blimp refuses NUL in every string (PostgreSQL cannot store it), as docs/api.md says.
        "allow-x00 = false",
        "[phases]",
        *(f"{phase}.enabled = {toml(phase in phases)}" for phase in ("examples", "coverage", "fuzzing", "stateful")),
        "[checks]",
        "enabled = false",
        *(f"{check}.enabled = true" for check in CHECKS),
        # The reports keep credentials and idempotency keys as sent, so that every case can be repeated.
        "[output.sanitization]",
        "enabled = false",
        "[auth.openapi.masterSecret]",
        f"username = {toml(key)}",
        f"password = {toml(master)}",
        "[auth.openapi.appSecret]",
        f"username = {toml(key)}",
        f"password = {toml(app_secret)}",
        "[dictionaries.channels]",
        f"values = {toml(channels)}",
        "[dictionaries.app_keys]",
        f"values = {toml([key])}",
        "[dictionaries.push_ids]",
        f"values = {toml(push_ids)}",
        "[parameters]",
        '"path.channel_id" = {dictionary = "channels", probability = 0.8}',
        '"header.X-UA-Channel-ID" = {dictionary = "channels", probability = 0.8}',
        '"body.channel_id" = {dictionary = "channels", probability = 0.8}',
        '"path.app_key" = {dictionary = "app_keys", probability = 0.8}',
        '"path.push_id" = {dictionary = "push_ids", probability = 0.5}',
        # POST /api/push/validate checks exactly as POST /api/push does: the coverage phase's thousands of variants of
        # the push object go to validate only; /api/push gets the fuzzing and stateful phases.
        "[[operations]]",
        'include-name = "POST /api/push"',
        "phases.coverage.enabled = false",
        # An event stream's 200 is a response that never ends: EventStreamAPITests reads it, and its refusals.
        "[[operations]]",
        'include-name = "POST /api/events"',
        "enabled = false",
    ]) + "\n"


def decoded(content):
    """A recorded body: `{"$base64": …}` or text."""
    if content is None:
        return b""
    if isinstance(content, dict) and "$base64" in content:
        return base64.b64decode(content["$base64"])
    return content.encode() if isinstance(content, str) else json.dumps(content).encode()


def printable(data, limit=600):
    text = data.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else text[:limit] + f"… ({len(data)} bytes)"


def credentials(value):
    """The Authorization header, by the name of its credentials."""
    for name, secret in (("MASTER_SECRET", master), ("APP_SECRET", app_secret)):
        if value == basic(secret):
            return f'-u "$APP_KEY:${name}"'
    return "-H " + shlex.quote(f"Authorization: {value}")


def curl(request):
    """A curl command that sends the request again, with $APP_KEY and the secrets from the environment."""
    parts = ["curl -sS -i -X", request["method"], shlex.quote(request["uri"]), "-H", shlex.quote(f"Accept: {ACCEPT}")]
    for name, values in request.get("headers", {}).items():
        if name.lower() in ("accept", "user-agent", "accept-encoding", "connection", "content-length"):
            continue
        for value in values if isinstance(values, list) else [values]:
            parts += [credentials(value)] if name.lower() == "authorization" else ["-H", shlex.quote(f"{name}: {value}")]
    if request.get("body") is not None:
        body = decoded(request["body"])
        try:
            parts += ["--data-binary", shlex.quote(body.decode("utf-8"))]
        except UnicodeDecodeError:
            parts = ["printf", shlex.quote("".join(f"\\x{byte:02x}" for byte in body)), "|"] + parts + ["--data-binary", "@-"]
    return " ".join(parts)


def results(path):
    """(failures by kind, errors, requests sent, operations tested) from the NDJSON events."""
    failures, errors, requests, operations = {}, [], 0, set()
    with open(path) as file:
        for line in file:
            event = json.loads(line)
            name, payload = next(iter(event.items()))
            if name in ("NonFatalError", "FatalError"):
                errors.append(payload)
                continue
            if name != "ScenarioFinished":
                continue
            recorder = payload["recorder"]
            interactions = recorder.get("interactions", {})
            requests += len(interactions)
            cases = {case_id: case["value"] for case_id, case in recorder.get("cases", {}).items()}
            operations.update(f"{cases[case_id]['method']} {cases[case_id]['path']}" for case_id in interactions
                              if case_id in cases)
            for case_id, checks in recorder.get("checks", {}).items():
                for check in checks:
                    if check["status"] == "success":
                        continue
                    case = cases.get(case_id, {})
                    interaction = interactions.get(case_id) or {}
                    failure = (check.get("failure_info") or {}).get("failure", {})
                    status = (interaction.get("response") or {}).get("status_code")
                    kind = (case.get("method"), case.get("path"), check["name"], failure.get("title"), status)
                    failures.setdefault(kind, []).append((interaction, failure))
    return failures, errors, requests, operations


def report(failures):
    for number, ((method, path, check, title, status), cases) in enumerate(sorted(failures.items(), key=str), 1):
        # The shortest request of the kind is the easiest to read.
        interaction, failure = min(cases, key=lambda case: len(decoded((case[0].get("request") or {}).get("body"))))
        request = interaction.get("request") or {}
        response = interaction.get("response") or {}
        headers = response.get("headers", {})
        print(f"\nFAILURE {number}: {method} {path}: {check}: {title} ({len(cases)} case(s), status {status})")
        if request:
            print(f"  request:  {request['method']} {request['uri']}")
        if request.get("body") is not None:
            print(f"  body:     {printable(decoded(request['body']))}")
        if response:
            print(f"  response: {status} {', '.join(headers.get('content-type', []))}"
                  + (f", Retry-After: {headers['retry-after'][0]}" if "retry-after" in headers else ""))
            print(f"            {printable(decoded(response.get('content')))}")
        message = failure.get("message", "").split("\n\nSchema:")[0].strip()
        if message:
            print("  why:      " + message[:800].replace("\n", "\n            "))
        if request:
            print(f"  repeat (APP_KEY, MASTER_SECRET, APP_SECRET exported):\n    {curl(request)}")


def main():
    keep = os.environ.get("SCHEMATHESIS_REPORT_DIR")
    folder = keep or tempfile.mkdtemp(prefix="blimp-schemathesis-")
    os.makedirs(folder, exist_ok=True)
    configuration = os.path.join(folder, "schemathesis.toml")
    try:
        push_id = queue_push()
    except OSError as error:  # urllib's HTTPError and URLError among them
        body = error.read().decode(errors="replace")[:500] if hasattr(error, "read") else ""
        sys.exit(f"schemathesis: could not queue a push at {base}/api/push: {error} {body}")
    with open(configuration, "w") as file:
        file.write(config([push_id]))
    events, summary = os.path.join(folder, "events.ndjson"), os.path.join(folder, "report.json")
    for stale in (events, summary):
        if os.path.exists(stale):
            os.remove(stale)
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", configuration, "--no-color", "run", DOCUMENT,
               "--report", "ndjson,json", "--report-ndjson-path", events, "--report-json-path", summary]
    started = time.monotonic()
    run = subprocess.run(command, cwd=folder, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if not os.path.exists(events):
        print(run.stdout[-4000:], run.stderr[-4000:], sep="\n")
        sys.exit(f"schemathesis did not run (exit status {run.returncode})")
    failures, errors, requests, operations = results(events)
    tested = len(operations)
    if os.path.exists(summary):
        with open(summary) as file:
            tested = (json.load(file).get("operations") or {}).get("tested", tested)
    report(failures)
    for error in errors:
        print(f"\nERROR: {json.dumps(error)[:1500]}")
    if failures or errors or run.returncode != 0:
        print("\nschemathesis's own report (its end):\n" + run.stdout[-5000:], run.stderr[-3000:], sep="\n")
        print(f"schemathesis: {tested} operations, {requests} requests, {len(failures)} kinds of failure, "
              f"{len(errors)} errors in {elapsed:.0f} s (seed {seed}, exit status {run.returncode}; configuration and "
              f"reports in {folder})")
        sys.exit(1)
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"schemathesis: {tested} operations, {requests} requests, no failures in {elapsed:.0f} s (seed {seed})")


if __name__ == "__main__":
    main()
