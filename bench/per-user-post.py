"""Posts one update of the shared name `delivery` per user to `POST /api/push` from C connections, users FIRST..LAST
(user i's channel is md5('user/' || i)::uuid, every other update with the caller's timestamp), as fast as answered or
paced to RATE pushes/s in all (0: unpaced). Prints a table row: pushes, seconds, pushes/s, p50 and p99 ms, answers.

    python3 bench/per-user-post.py PORT APP_KEY:SECRET FIRST LAST CONNECTIONS [RATE]
"""
import base64, collections, hashlib, http.client, json, sys, threading, time, uuid

port, auth, first, last, connections = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rate = float(sys.argv[6]) if len(sys.argv) > 6 else 0
headers = {"Authorization": "Basic " + base64.b64encode(auth.encode()).decode(),
           "Accept": "application/vnd.urbanairship+json; version=3", "Content-Type": "application/json"}
stamp = int(time.time())
statuses, latencies, lock = collections.Counter(), [], threading.Lock()
began = time.monotonic()


def post(lane):
    connection = http.client.HTTPConnection("127.0.0.1", port)
    for n, i in enumerate(range(first + lane, last + 1, connections)):
        if rate:
            # This lane's share of the rate: its n-th request is due n × connections / rate after the start.
            delay = began + n * connections / rate - time.monotonic()
            if delay > 0: time.sleep(delay)
        channel = str(uuid.UUID(hashlib.md5(b"user/%d" % i).hexdigest()))
        activity = {"event": "update", "name": "delivery", "priority": 5, "content_state": {"user": i}}
        if i % 2 == 0: activity["timestamp"] = stamp
        body = json.dumps({"audience": {"ios_channel": channel}, "device_types": ["ios"],
                           "notification": {"ios": {"live_activity": activity}}})
        sent = time.monotonic()
        connection.request("POST", "/api/push", body, headers)
        response = connection.getresponse(); response.read()
        with lock:
            statuses[response.status] += 1
            latencies.append((time.monotonic() - sent) * 1000)


threads = [threading.Thread(target=post, args=(lane,)) for lane in range(connections)]
for thread in threads: thread.start()
for thread in threads: thread.join()
seconds = time.monotonic() - began
latencies.sort()
pick = lambda q: latencies[min(len(latencies) - 1, int(len(latencies) * q))]
pushes = last - first + 1
print("| %d | %.2f | %.0f | %.1f | %.1f | %s |" % (pushes, seconds, pushes / seconds, pick(0.5), pick(0.99),
      ", ".join("%d × %d" % (count, status) for status, count in sorted(statuses.items()))))
