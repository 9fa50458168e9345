"""The official Airship Python library's schedule flows, unmodified, against Blimp.

Run by AirshipLibraryTests with BLIMP_URL (ending in /api/), APP_KEY, MASTER_SECRET and CHANNEL_IDS. Exits non-zero
on the first failed check.
"""
import datetime
import os

import urbanairship as ua
from urbanairship.enums import LiveActivityEvent
from urbanairship.urls import Urls

client = ua.BasicAuthClient(os.environ["APP_KEY"], os.environ["MASTER_SECRET"])
client.urls = Urls(base_url=os.environ["BLIMP_URL"])
ids = os.environ["CHANNEL_IDS"].split(",")
FORMAT = "%Y-%m-%dT%H:%M:%S"
tomorrow = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)).replace(tzinfo=None, microsecond=0)


def live_activity_push(event, **fields):
    push = ua.Push(client)
    push.audience = ua.ios_channel(ids[0])
    push.notification = ua.notification(ios=ua.ios(live_activity=ua.live_activity(name="match-1", event=event, **fields)))
    push.device_types = ua.device_types("ios")
    return push


def expect_failure(action, status):
    try:
        action()
    except ua.AirshipFailure as failure:
        assert failure.error_code // 100 == status, (failure.error_code, failure.error, failure.details)
        return failure
    raise AssertionError("no failure")


# Create one schedule in UTC: the answer's schedule_urls give its URL.
once = ua.ScheduledPush(client)
once.name = "full time"
once.schedule = ua.scheduled_time(tomorrow)
once.push = live_activity_push(LiveActivityEvent.END, priority=5)
once.send()
assert once.url.startswith(os.environ["BLIMP_URL"] + "schedules/"), once.url

# Look it up: name, schedule and the push with its device_types.
found = ua.ScheduledPush.from_url(client, once.url)
assert found.name == "full time", found.name
assert found.schedule == {"scheduled_time": tomorrow.strftime(FORMAT)}, found.schedule
assert found.push.device_types == ["ios"], found.push.device_types
assert found.push.audience == {"ios_channel": ids[0]}, found.push.audience

# Update it through the library: a new name and time.
found.name = "full time, delayed"
found.schedule = ua.scheduled_time(tomorrow + datetime.timedelta(hours=1))
found.update()
again = ua.ScheduledPush.from_url(client, once.url)
assert again.name == "full time, delayed", again.name
assert again.schedule["scheduled_time"] == (tomorrow + datetime.timedelta(hours=1)).strftime(FORMAT), again.schedule

# A recurring schedule with an exclusion, paused and resumed.
daily = ua.ScheduledPush(client)
daily.schedule = ua.scheduled_time(tomorrow)
daily.recurring = ua.recurring_schedule(
    count=1, type="daily",
    exclusions=[ua.schedule_exclusion(start_hour=1, end_hour=5, start_date=tomorrow, end_date=tomorrow + datetime.timedelta(days=7))])
daily.push = live_activity_push(LiveActivityEvent.UPDATE, content_state={"minute": 0})
daily.send()
daily.pause()
assert ua.ScheduledPush.from_url(client, daily.url).schedule["recurring"]["paused"] is True
daily.resume()
recurring = ua.ScheduledPush.from_url(client, daily.url).schedule["recurring"]
assert recurring["paused"] is False, recurring
assert recurring["cadence"] == {"type": "daily", "count": 1}, recurring
assert recurring["exclusions"][0]["hour_range"] == "1-5", recurring

# Local time.
local = ua.ScheduledPush(client)
local.schedule = ua.local_scheduled_time(tomorrow)
local.push = live_activity_push(LiveActivityEvent.UPDATE, content_state={"minute": 1})
local.send()
assert ua.ScheduledPush.from_url(client, local.url).schedule == {"local_scheduled_time": tomorrow.strftime(FORMAT)}

# The list, a page of one at a time, followed to its end through next_page.
listed = [schedule.url for schedule in ua.ScheduledList(client, limit=1)]
assert sorted(listed) == sorted([once.url, daily.url, local.url]), listed

# Bad input: Airship's error body.
past = ua.ScheduledPush(client)
past.schedule = ua.scheduled_time(tomorrow - datetime.timedelta(days=2))
past.push = live_activity_push(LiveActivityEvent.END)
failure = expect_failure(past.send, 400)
assert failure.details["path"] == "schedule.scheduled_time", failure.details
best = ua.ScheduledPush(client)
best.schedule = ua.best_time(tomorrow)
best.push = live_activity_push(LiveActivityEvent.END)
expect_failure(best.send, 400)

# Cancel: gone.
once.cancel()
expect_failure(lambda: ua.ScheduledPush.from_url(client, once.url), 404)
print("all flows passed")
