"""Airship's Real-Time Data Streaming client (uaconnect), unmodified, against Blimp's POST /api/events.

Run by EventStreamProcessTests with BLIMP_URL (ending in /), APP_KEY, API_TOKEN, CHANNEL_IDS (three phones with an
activity), NAMED_USER (the first phone's), FIRST_PUSH (an update already delivered to the three) and PHASE_DIR, where
this script and the test hand over to each other by files:

1. An EventConsumer from EARLIEST reads the three activities' LIVE_ACTIVITY_ACTIVE, then the first push's PUSH_BODY,
   its three SENDs and its PUSH_FINISHED, acknowledging each (its FileRecorder keeps the last offset), then writes
   PHASE_DIR/first. The test stops the api
   with SIGTERM, starts it again and sends a second push: the stream ends cleanly, and uaconnect reconnects by itself
   from its offset.
2. Once it has the second push's events it writes PHASE_DIR/second. The test kills the api with SIGKILL, starts it
   again and sends a third push, an end: the broken stream is reopened from the recorder's offset, as an application
   does.
3. Every event was read exactly once, in offset order: the end's with the activities' LIVE_ACTIVITY_ENDED.
4. Filters, each read by a new consumer from EARLIEST up to the blank line that says the stream has caught up.
Exits non-zero on the first failed check.
"""
import os
import signal
import sys

import requests
import uaconnect

signal.alarm(300)  # a stream that hangs fails this test instead of holding the suite
base = os.environ["BLIMP_URL"]
app_key = os.environ["APP_KEY"]
token = os.environ["API_TOKEN"]
channels = os.environ["CHANNEL_IDS"].split(",")
named_user = os.environ["NAMED_USER"]
first_push = os.environ["FIRST_PUSH"]
phase_dir = os.environ["PHASE_DIR"]
offset_file = os.path.join(phase_dir, "offset")


def consumer(recorder_path, filters=()):
    reader = uaconnect.EventConsumer(
        app_key=app_key, access_token=token, recorder=uaconnect.FileRecorder(recorder_path), url=base)
    for filter_ in filters:
        reader.add_filter(filter_)
    return reader


def check(condition, message):
    if not condition:
        print("FAILED:", message, flush=True)
        sys.exit(1)


# 1-3. One consumer through two restarts of the api.
events = []


def pushes():
    """The push ids of the PUSH_BODY events read, in order."""
    return [event.body["push_id"] for event in events if event.event_type == "PUSH_BODY"]


def of(push_id, event_type):
    return [event for event in events if event.event_type == event_type and event.body["push_id"] == push_id]


def sends(push_id):
    return of(push_id, "SEND")


def read_until(reader, done):
    """Reads and acknowledges events until `done()`; reopens a broken stream from the recorded offset."""
    while not done():
        try:
            for event in reader.read():
                if event is not None:
                    events.append(event)
                    reader.ack(event)
                if done():
                    return
        except requests.exceptions.ChunkedEncodingError:
            reader.connection.close()
            reader.connect(resume_offset=reader.recorder.read_offset())


def complete(count):
    return lambda: len(pushes()) >= count and all(
        len(sends(push)) >= 3 and of(push, "PUSH_FINISHED") for push in pushes()[:count])


reader = consumer(offset_file)
reader.connect(start="EARLIEST")
read_until(reader, complete(1))
check(pushes() == [first_push], f"the first push's body: {pushes()}")
open(os.path.join(phase_dir, "first"), "w").close()
read_until(reader, complete(2))
open(os.path.join(phase_dir, "second"), "w").close()
read_until(reader, complete(3))
reader.connection.close()

check(len(pushes()) == 3, f"three pushes: {pushes()}")
for push in pushes():
    check(sorted(event.device["channel"] for event in sends(push)) == sorted(channels), f"{push}'s sends")
    check(all(event.device["ios_channel"] == event.device["channel"] for event in sends(push)), "ios_channel")
    check(all(event.device["device_type"] == "IOS" for event in sends(push)), "device_type")
    finished = of(push, "PUSH_FINISHED")
    check(len(finished) == 1 and finished[0].body["state"] == "done" and finished[0].body["counts"]["sent"] == 3,
          f"{push} finished: {[event.body for event in finished]}")
active = [event for event in events if event.event_type == "LIVE_ACTIVITY_ACTIVE"]
check(events[:3] == active and sorted(event.device["channel"] for event in active) == sorted(channels)
      and all(event.body["name"] == "final" and event.body["activity_id"] for event in active), f"active: {active}")
ended = of(pushes()[2], "LIVE_ACTIVITY_ENDED")
check(sorted(event.device["channel"] for event in ended) == sorted(channels)
      and all(event.body["ended_by"] == "push" and event.body["name"] == "final" for event in ended), f"ended: {ended}")
check(len(events) == 21, f"twenty-one events once each: {[(e.event_type, e.offset) for e in events]}")
check(len({event.id for event in events}) == 21, "distinct ids")
offsets = [int(event.offset) for event in events]
check(offsets == sorted(offsets) and len(set(offsets)) == 21, f"offsets in order: {offsets}")
named = [event for event in events if event.device and event.device.get("named_user_id") == named_user]
check(len(named) == 5 and all(event.device["channel"] == channels[0] for event in named), "the named user's events")
print("resumed through SIGTERM and SIGKILL", flush=True)


# 4. Filters.
def filtered(*filters):
    reader = consumer(os.path.join(phase_dir, "unused"), filters)
    reader.connect(start="EARLIEST")
    found = []
    for event in reader.read():
        if event is None:
            break
        found.append(event)
    reader.connection.close()
    return found


by_type = uaconnect.Filter()
by_type.types("send")
check([event.event_type for event in filtered(by_type)] == ["SEND"] * 9, "by type")
by_types = uaconnect.Filter()
by_types.types("LIVE_ACTIVITY_ENDED", "PUSH_BODY")
found = [event.event_type for event in filtered(by_types)]
check(found == ["PUSH_BODY"] * 3 + ["LIVE_ACTIVITY_ENDED"] * 3, f"by types: {found}")

by_channel = uaconnect.Filter()
by_channel.devices(ios_channel=channels[1])
found = filtered(by_channel)
check(len(found) == 5 and {event.device["channel"] for event in found} == {channels[1]}, f"by channel: {found}")

by_push = uaconnect.Filter()
by_push.notifications(push_id=first_push)
found = filtered(by_push)
check(sorted(event.event_type for event in found) == ["PUSH_BODY", "PUSH_FINISHED", "SEND", "SEND", "SEND"], f"by push: {found}")
check({event.body["push_id"] for event in found} == {first_push}, "by push: one push")

bodies = uaconnect.Filter()
bodies.types("PUSH_BODY")
by_named_user = uaconnect.Filter()
by_named_user.devices(named_user_id=named_user)
found = filtered(bodies, by_named_user)
check(sorted(event.event_type for event in found) == ["LIVE_ACTIVITY_ACTIVE", "LIVE_ACTIVITY_ENDED"] + ["PUSH_BODY"] * 3 + ["SEND"] * 3,
      f"either filter: {found}")

print("all flows passed", flush=True)
