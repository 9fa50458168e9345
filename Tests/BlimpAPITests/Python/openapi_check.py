"""Blimp's answers against docs/openapi.yaml.

Run by OpenAPITests with BLIMP_URL (http://host:port), APP_KEY, APP_SECRET, MASTER_SECRET and CHANNEL_IDS (channels
already registered). Sends good and bad requests to every route and validates each answer (status and body) with
openapi-core; exits non-zero on the first mismatch.
"""
import base64
import datetime
import json
import os
import sys
import uuid

import requests
import yaml
from openapi_core import Config, OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

base = os.environ["BLIMP_URL"]
with open(os.path.join(os.path.dirname(__file__), "../../../docs/openapi.yaml")) as file:
    document = yaml.safe_load(file)
document["servers"] = [{"url": base}]
# Airship's media type is JSON under another name.
spec = OpenAPI.from_dict(document, config=Config(
    extra_media_type_deserializers={"application/vnd.urbanairship+json": lambda value, **_: json.loads(value)}))
key, app_secret, master = os.environ["APP_KEY"], os.environ["APP_SECRET"], os.environ["MASTER_SECRET"]
channels = os.environ["CHANNEL_IDS"].split(",")
accept = {"Accept": "application/vnd.urbanairship+json; version=3;"}
checked = 0


def basic(secret):
    return {"Authorization": "Basic " + base64.b64encode(f"{key}:{secret}".encode()).decode()}


def check(method, path, expected, headers=None, body=None, params=None):
    """Sends the request, expects `expected`, and validates the answer against the document."""
    global checked
    request = requests.Request(method, base + path, headers={**accept, **(headers or {})}, params=params,
                               data=json.dumps(body) if body is not None and not isinstance(body, str) else body)
    prepared = request.prepare()
    response = requests.Session().send(prepared)
    if response.status_code != expected:
        sys.exit(f"{method} {path}: expected {expected}, got {response.status_code}: {response.text[:300]}")
    try:
        spec.validate_response(RequestsOpenAPIRequest(prepared), RequestsOpenAPIResponse(response))
    except Exception as error:  # the validation error names the operation and the field
        details = getattr(error, "__cause__", None) or error
        sys.exit(f"{method} {path} {response.status_code}: {error}: {details}\n{response.text[:500]}")
    checked += 1
    print(f"ok {method} {path} {response.status_code}")
    return response


master_headers = basic(master)
check("GET", "/health", 200)
check("GET", "/ready", 200)
check("GET", f"/api/remote-data/app/{key}/ios", 200, basic(app_secret))
check("GET", f"/api/remote-data/app/{key}/ios", 401)
created = check("POST", "/api/channels", 201, basic(app_secret),
                {"channel": {"device_type": "ios", "opt_in": True, "push_address": uuid.uuid4().hex * 2}}).json()
check("POST", "/api/channels", 400, basic(app_secret), {"channel": {"device_type": "android"}})
check("PUT", f"/api/channels/{created['channel_id']}", 200, basic(app_secret), {"channel": {"opt_in": False}})
check("PUT", f"/api/channels/{uuid.uuid4()}", 409, basic(app_secret), {"channel": {"device_type": "ios"}})
check("PUT", f"/api/channels/sdk/batch/{channels[0]}", 200, basic(app_secret), {"live_activities": [
    {"action": "set", "type": "update_token", "id": "A1", "name": "match-1", "token": "ab" * 32,
     "start_ts_ms": 1795000000000, "action_ts_ms": 1795000000000},
    {"action": "set", "type": "start_token", "attributes_type": "MatchAttributes", "token": "cd" * 32,
     "action_ts_ms": 1795000000000}]}, params={"platform": "ios"})
check("PUT", f"/api/channels/sdk/batch/{channels[0]}", 200, basic(app_secret), {"live_activities": [{"action": "set"}]})
check("PUT", f"/api/channels/sdk/batch/{channels[0]}", 400, basic(app_secret), {"live_activities": "x"})
check("GET", "/api/auth/device", 200, {**basic(app_secret), "X-UA-Channel-ID": channels[0]})
check("POST", "/api/contacts/identify/v2", 200, {**basic(app_secret), "X-UA-Channel-ID": channels[0]},
      {"action": {"type": "identify", "named_user_id": "user-1"}})
check("POST", "/warp9/", 200, body="")

check("GET", f"/api/channels/{channels[0]}", 200, master_headers)
check("GET", f"/api/channels/{uuid.uuid4()}", 404, master_headers)
check("GET", f"/api/channels/{channels[0]}", 401, basic(app_secret))
check("GET", "/api/channels", 200, master_headers, params={"limit": 2})
check("GET", "/api/live_activities", 200, master_headers, params={"name": "match-1"})
check("GET", "/api/live_activities", 200, master_headers, params={"name": "match-1", "limit": 1, "start": channels[0]})
check("GET", "/api/live_activities", 400, master_headers)
check("GET", "/api/live_activities", 401, basic(app_secret), params={"name": "match-1"})
check("GET", "/api/channels", 400, master_headers, params={"limit": 0})
check("GET", "/api/channels", 406, {**master_headers, "Accept": "application/json"})
check("POST", "/api/channels/tags", 200, master_headers, {"audience": {"ios_channel": channels[1]}, "add": {"teams": ["foxes"]}})
check("POST", "/api/channels/tags", 400, master_headers, {"audience": {"ios_channel": channels[1]}})
check("POST", "/api/named_users/associate", 200, master_headers,
      {"channel_id": channels[1], "device_type": "ios", "named_user_id": "user-2"})
check("POST", "/api/named_users/disassociate", 200, master_headers,
      {"channel_id": channels[1], "device_type": "ios", "named_user_id": "user-2"})
check("POST", "/api/named_users/tags", 200, master_headers, {"audience": {"named_user_id": "user-1"}, "add": {"crm": ["vip"]}})
check("GET", "/api/named_users", 200, master_headers, params={"id": "user-1"})
check("GET", "/api/named_users", 200, master_headers, params={"limit": 1})
check("GET", "/api/named_users", 404, master_headers, params={"id": "nobody"})

update = {"audience": {"tag": "foxes", "group": "teams"}, "device_types": ["ios"],
          "notification": {"ios": {"live_activity": {"event": "update", "name": "match-1",
                                                      "content_state": {"home": 1, "p": 0.941}}}}}
start = {"audience": {"ios_channel": channels[0]}, "device_types": ["ios"],
         "notification": {"ios": {"live_activity": {"event": "start", "name": "match-2", "attributes_type": "MatchAttributes",
                                                     "attributes": {"home": "Foxes"}, "content_state": {"home": 0},
                                                     "alert": {"title": "Kick-off"}}}}}
alert = {"audience": "all", "device_types": "all", "notification": {"alert": "Doors open", "ios": {"badge": 1}}}
check("POST", "/api/push/validate", 200, master_headers, [update, start, alert])
sent = check("POST", "/api/push", 202, {**master_headers, "Idempotency-Key": "openapi-check"}, update).json()
check("POST", "/api/push", 202, {**master_headers, "Idempotency-Key": "openapi-check"}, update)
check("POST", "/api/push", 202, master_headers, [start, alert])
check("POST", "/api/push", 400, master_headers, {**update, "campaigns": {}})
check("POST", "/api/push", 400, master_headers, "{\"audience\": ")
check("POST", "/api/push", 401, basic(app_secret), update)
older = json.loads(json.dumps(update))
older["notification"]["ios"]["live_activity"]["timestamp"] = 1000000000
check("POST", "/api/push", 202, master_headers, older)
check("GET", f"/api/pushes/{sent['push_ids'][0]}", 200, master_headers)
check("GET", f"/api/pushes/{uuid.uuid4()}", 404, master_headers)
check("GET", "/api/pushes", 200, master_headers, params={"limit": 1})
check("GET", "/api/audit", 200, master_headers, params={"limit": 1})
check("GET", "/api/audit", 200, master_headers, params={"action": "push.accepted", "since": "2020-01-01T00:00:00Z"})
check("GET", "/api/audit", 400, master_headers, params={"action": "push.sent"})
check("GET", "/api/audit", 401, basic(app_secret))
# Live activity channels: this API has no channel-management client, so creating one is 503.
check("POST", "/api/live_activity_channels", 503, master_headers, {"name": "match-9", "message_storage_policy": 0})
check("POST", "/api/live_activity_channels", 400, master_headers, {"name": "match-9", "message_storage_policy": 3})
check("GET", "/api/live_activity_channels", 200, master_headers, params={"include_deleted": "true"})
check("DELETE", "/api/live_activity_channels/match-9", 404, master_headers)

# Live Activity types: declared by schemas and by example, changed, read, listed and deleted; a push its type refuses,
# and an update naming its start's type as a hint.
match_type = {"attributes": {"type": "object", "properties": {"home": {"type": "string"}}, "required": ["home"]},
              "content_state": {"type": "object", "properties": {"home": {"type": "integer", "minimum": 0},
                                                                 "kickoff": {"type": ["number", "null"], "format": "date"}}}}
check("PUT", "/api/live_activity_types/MatchAttributes", 201, master_headers, match_type)
check("PUT", "/api/live_activity_types/MatchAttributes", 200, master_headers, match_type, params={"force": "false"})
check("PUT", "/api/live_activity_types/OrderAttributes", 201, master_headers,
      {"example": {"attributes": {"order": "A-1"}, "content_state": {"step": 1, "eta": 2.5, "courier": None}}})
check("PUT", "/api/live_activity_types/OrderAttributes", 400, master_headers,
      {"attributes": {"type": "object", "properties": {"a": {"$ref": "#"}}}, "content_state": {"type": "object"}})
check("PUT", "/api/live_activity_types/OrderAttributes", 400, master_headers, {"example": {"attributes": [], "content_state": {}}})
check("PUT", "/api/live_activity_types/" + "T" * 257, 400, master_headers, match_type)
check("PUT", "/api/live_activity_types/OrderAttributes", 401, basic(app_secret), match_type)
check("GET", "/api/live_activity_types/MatchAttributes", 200, master_headers)
check("GET", "/api/live_activity_types/NoSuchAttributes", 404, master_headers)
check("GET", "/api/live_activity_types", 200, master_headers)
refused = json.loads(json.dumps(start))
refused["notification"]["ios"]["live_activity"]["content_state"] = {"home": -1}
check("POST", "/api/push/validate", 400, master_headers, refused)
check("POST", "/api/push", 400, master_headers, [update, refused])
hinted = json.loads(json.dumps(update))
hinted["notification"]["ios"]["live_activity"]["attributes_type"] = "MatchAttributes"
check("POST", "/api/push/validate", 200, master_headers, hinted)
check("DELETE", "/api/live_activity_types/OrderAttributes", 204, master_headers)
check("DELETE", "/api/live_activity_types/OrderAttributes", 404, master_headers)

# Schedules: one and an array created, read, listed, replaced, paused, resumed and cancelled; what is refused.
later = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0) + datetime.timedelta(days=1)
tomorrow = later.strftime("%Y-%m-%dT%H:%M:%S")
once = {"name": "full time", "schedule": {"scheduled_time": tomorrow}, "push": update}
weekly = {"schedule": {"local_scheduled_time": tomorrow, "recurring": {
              "cadence": {"type": "weekly", "count": 2, "days_of_week": ["monday", "friday"]},
              "end_time": (later + datetime.timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%S"),
              "exclusions": [{"hour_range": "22-5", "days_of_week": ["sunday"]},
                             {"date_range": f"{tomorrow}/{(later + datetime.timedelta(days=7)).strftime('%Y-%m-%dT%H:%M:%S')}"}]}},
          "push": alert}
daily = {"schedule": {"scheduled_time": tomorrow, "recurring": {"cadence": {"type": "daily", "count": 1}, "paused": True}},
         "push": {**update, "options": {"expiry": 3600}}}
created = check("POST", "/api/schedules", 201, master_headers, once).json()
schedule_id = created["schedule_ids"][0]
check("POST", "/api/schedules", 201, master_headers, [weekly, daily])
check("GET", f"/api/schedules/{schedule_id}", 200, master_headers)
check("GET", f"/api/schedules/{uuid.uuid4()}", 404, master_headers)
check("GET", "/api/schedules/not-a-schedule", 404, master_headers)
listed = check("GET", "/api/schedules", 200, master_headers, params={"limit": 2}).json()
check("GET", "/api/schedules", 200, master_headers, params={"limit": 2, "start": listed["next_page"].split("start=")[1]})
check("GET", "/api/schedules", 400, master_headers, params={"limit": 0})
check("GET", "/api/schedules", 401, basic(app_secret))
check("PUT", f"/api/schedules/{schedule_id}", 200, master_headers, {**once, "name": "full time, delayed"})
check("PUT", f"/api/schedules/{uuid.uuid4()}", 404, master_headers, once)
check("POST", f"/api/schedules/{schedule_id}/pause", 204, master_headers, body="")
check("POST", f"/api/schedules/{schedule_id}/resume", 204, master_headers, body="")
check("POST", f"/api/schedules/{uuid.uuid4()}/pause", 404, master_headers, body="")
check("POST", "/api/schedules", 400, master_headers, {**once, "schedule": {"best_time": {"send_time": "10:00:00"}}})
check("POST", "/api/schedules", 400, master_headers, {**once, "schedule": {"scheduled_time": "2001-01-01T00:00:00"}})
check("POST", "/api/schedules", 400, master_headers, {**once, "push_ids": [str(uuid.uuid4())]})
check("POST", "/api/schedules", 400, master_headers,
      {**daily, "schedule": {"scheduled_time": tomorrow, "recurring": {"cadence": {"type": "daily", "count": 10 ** 12}}}})
check("POST", "/api/schedules", 400, master_headers, {**daily, "push": older})
check("POST", "/api/schedules", 401, basic(app_secret), once)
check("POST", "/api/schedules/create-and-send", 400, master_headers, once)
check("POST", "/api/templates/schedules", 400, master_headers, once)
check("DELETE", f"/api/schedules/{schedule_id}", 204, master_headers)
check("DELETE", f"/api/schedules/{schedule_id}", 404, master_headers)

check("POST", "/api/channels/uninstall", 200, master_headers, [channels[2]])
check("POST", "/api/named_users/uninstall", 200, master_headers, {"named_user_id": ["user-1"]})
print(f"{checked} answers match docs/openapi.yaml")
print("all responses match the spec")
