"""Live Activity types with the official Airship Python library, unmodified, against `blimp api`.

Run by LiveActivityTypeProcessTests with BLIMP_URL (the API's base URL), APP_KEY, MASTER_SECRET, START_CHANNEL (a
channel with push-to-start tokens for MatchAttributes and OrderAttributes) and UPDATE_CHANNEL (a channel tracking an
activity named match-7). Declares MatchAttributes by its schemas and OrderAttributes by an example (plain urllib: the
library has no call for Blimp's extension), then sends, with the library, pushes that match (accepted) and pushes that
do not (AirshipFailure, status 400, naming the path). Prints "accepted N" and exits non-zero on the first failed check.
"""
import base64
import datetime
import json
import os
import urllib.request

import urbanairship as ua
from urbanairship.urls import Urls

base = os.environ["BLIMP_URL"]
credentials = base64.b64encode(f"{os.environ['APP_KEY']}:{os.environ['MASTER_SECRET']}".encode()).decode()
client = ua.BasicAuthClient(os.environ["APP_KEY"], os.environ["MASTER_SECRET"])
client.urls = Urls(base_url=base + "/api/")
start_channel, update_channel = os.environ["START_CHANNEL"], os.environ["UPDATE_CHANNEL"]


def put_type(name, body):
    """PUT /api/live_activity_types/{name}: the status and the answer."""
    request = urllib.request.Request(
        f"{base}/api/live_activity_types/{name}", method="PUT", data=json.dumps(body).encode(),
        headers={"Authorization": "Basic " + credentials, "Content-Type": "application/json",
                 "Accept": "application/vnd.urbanairship+json; version=3"})
    with urllib.request.urlopen(request) as response:
        return response.status, json.loads(response.read())


status, answer = put_type("MatchAttributes", {
    "attributes": {"type": "object", "properties": {"home": {"type": "string"}, "away": {"type": "string"}}, "required": ["home", "away"]},
    "content_state": {"type": "object", "properties": {
        "home": {"type": "integer", "minimum": 0}, "away": {"type": "integer", "minimum": 0},
        "kickoff": {"type": "number", "format": "date"}}, "required": ["home", "away"]}})
assert status == 201 and answer["live_activity_type"]["attributes_type"] == "MatchAttributes", (status, answer)
status, answer = put_type("OrderAttributes", {"example": {
    "attributes": {"order": "A-1"}, "content_state": {"step": 1, "eta": 12.5, "courier": None}}})
assert status == 201, (status, answer)
assert answer["live_activity_type"]["content_state"]["properties"]["step"]["type"] == "integer", answer

accepted = 0


def push(live_activity, channel):
    p = ua.Push(client)
    p.audience = ua.ios_channel(channel)
    p.notification = ua.notification(ios=ua.ios(live_activity=live_activity))
    p.device_types = ua.device_types("ios")
    return p


def send(live_activity, channel):
    """Sends a push that matches its type: accepted."""
    global accepted
    sent = push(live_activity, channel).send()
    assert sent.ok is True and len(sent.push_ids) == 1, (sent.ok, sent.push_ids)
    accepted += 1


def refused(live_activity, channel, path, words):
    """Sends, then validates, a push its type refuses: AirshipFailure, 400, naming `path` and saying `words`."""
    for attempt in (push(live_activity, channel).send, push(live_activity, channel).validate):
        try:
            attempt()
            raise AssertionError(f"accepted: {live_activity}")
        except ua.AirshipFailure as failure:
            assert failure.response.status_code == 400, failure.response.status_code
            assert failure.error_code == 40000, failure.error_code
            assert failure.details["path"] == "notification.ios.live_activity." + path, failure.details
            assert words in failure.details["error"], failure.details


now = datetime.datetime.now(datetime.timezone.utc)
since2001 = (now - datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)).total_seconds()
start = {"event": "start", "name": "match-7", "attributes_type": "MatchAttributes", "attributes": {"home": "Foxes", "away": "Tigers"},
         "content_state": {"home": 0, "away": 0, "kickoff": since2001 + 600}, "alert": {"title": "Kick-off"}}
refused({**start, "attributes": {"home": "Foxes"}}, start_channel, "attributes.away", "away is required")
refused({**start, "content_state": {"home": 0, "away": 0, "kickoff": now.timestamp() + 600}}, start_channel,
        "content_state.kickoff", "looks like Unix time")
send(start, start_channel)

# The update is checked by the type match-7 was started with; the hint names it, and is never sent to APNs.
update = {"event": "update", "name": "match-7", "content_state": {"home": 1, "away": 0}}
refused({**update, "content_state": {"home": "one", "away": 0}}, update_channel, "content_state.home", "expected an integer")
refused({**update, "attributes_type": "OrderAttributes"}, update_channel, "attributes_type", "last started as 'MatchAttributes'")
send({**update, "attributes_type": "MatchAttributes"}, update_channel)
refused({"event": "end", "name": "match-7", "content_state": {"home": 1}}, update_channel, "content_state.away", "away is required")

# The derived type: step an integer, eta a number, courier optional.
order = {"event": "start", "name": "order-1", "attributes_type": "OrderAttributes", "attributes": {"order": "A-1"},
         "content_state": {"step": 1, "eta": 9, "courier": "Ana"}, "alert": {"title": "On its way"}}
refused({**order, "content_state": {"step": 1.5, "eta": 9}}, start_channel, "content_state.step", "expected an integer")
refused({**order, "content_state": {"step": 1}}, start_channel, "content_state.eta", "eta is required")
send(order, start_channel)

print(f"accepted {accepted}")
