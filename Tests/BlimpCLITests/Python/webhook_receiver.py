"""A webhook endpoint for WebhookProcessTests: verifies every delivery with the `standardwebhooks` library (PyPI),
unmodified, and keeps the events it received.

Run with PORT (to listen on, loopback), SECRETS (the endpoint's `whsec_…` secrets, comma-separated: every delivery must
verify with each, as it does while a rotated secret still signs) and EXPECT (how many distinct events to take).
It answers 204 to each verified delivery until it holds EXPECT distinct events, then 410 Gone to the next one, and
exits, printing one JSON line: the events' types and ids in the order received, the deliveries and retries it saw.
A delivery that does not verify fails it at once.
"""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook

signal.alarm(240)  # a sender that never comes fails the test instead of holding the suite
webhooks = [Webhook(secret) for secret in os.environ["SECRETS"].split(",")]
expect = int(os.environ["EXPECT"])
events, seen, batches = [], set(), []


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        headers = {name.lower(): value for name, value in self.headers.items()}
        try:
            payload = [webhook.verify(body, headers) for webhook in webhooks][0]
        except Exception as error:  # noqa: BLE001: any refusal is the failure under test
            print(json.dumps({"failed": f"did not verify: {error}"}), flush=True)
            os._exit(1)
        done = len(seen) >= expect
        self.send_response(410 if done else 204)
        self.end_headers()
        if done:
            print(json.dumps({"events": events, "batches": batches}), flush=True)
            os._exit(0)
        batches.append(headers["webhook-id"])
        for event in payload["data"]:
            if event["id"] not in seen:
                seen.add(event["id"])
                events.append({"type": event["type"], "id": event["id"], "offset": event["offset"]})

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", int(os.environ["PORT"])), Receiver).serve_forever()
