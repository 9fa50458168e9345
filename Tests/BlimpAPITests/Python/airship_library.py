"""The official Airship Python library, unmodified, against Blimp.

Run by AirshipLibraryTests with BLIMP_URL (ending in /api/), APP_KEY, MASTER_SECRET and CHANNEL_IDS (five channels
already registered). Exits non-zero on the first failed check.
"""
import base64
import datetime
import json
import os
import urllib.request

import urbanairship as ua
from urbanairship.enums import LiveActivityEvent
from urbanairship.urls import Urls

client = ua.BasicAuthClient(os.environ["APP_KEY"], os.environ["MASTER_SECRET"])
client.urls = Urls(base_url=os.environ["BLIMP_URL"])
ids = os.environ["CHANNEL_IDS"].split(",")

# ChannelTags: add to two groups, then remove one tag.
tags = ua.ChannelTags(client)
tags.set_audience(ios=ids[0])
tags.add("device", ["sports", "news"])
tags.add("loyalty", "gold")
assert tags.send()["ok"] is True
tags = ua.ChannelTags(client)
tags.set_audience(ios=ids[0])
tags.remove("device", "news")
tags.send()

# ChannelInfo: Airship's fields, dates parsed by the library.
info = ua.ChannelInfo(client).lookup(ids[0])
assert info.channel_id == ids[0], info.channel_id
assert info.device_type == "ios"
assert info.installed is True
assert isinstance(info.created, datetime.datetime), info.created
assert isinstance(info.last_registration, datetime.datetime), info.last_registration
assert info.tags == ["sports"], info.tags
assert info.tag_groups == {"device": ["sports"], "loyalty": ["gold"]}, info.tag_groups

# ChannelList: pages of two, followed to the end through next_page.
listed = [channel.channel_id for channel in ua.ChannelList(client, limit=2)]
assert listed == sorted(ids), listed

# NamedUser: associate, tag, look up, disassociate.
user = ua.NamedUser(client, "user-1")
user.associate(ids[1], "ios")
user.associate(ids[2], "ios")
assert user.tag("crm", add=["vip"])["ok"] is True
found = user.lookup()["named_user"]
assert found["named_user_id"] == "user-1"
assert sorted(c["channel_id"] for c in found["channels"]) == sorted([ids[1], ids[2]]), found["channels"]
assert found["tags"] == {"crm": ["vip"]}, found["tags"]
user.disassociate(ids[2], "ios")
assert [c["channel_id"] for c in user.lookup()["named_user"]["channels"]] == [ids[1]]

# Errors arrive as AirshipFailure with Airship's fields.
try:
    ua.ChannelInfo(client).lookup("00000000-0000-4000-8000-000000000000")
    raise AssertionError("an unknown channel was found")
except ua.AirshipFailure as failure:
    assert failure.error_code == 40401, failure.error_code

# ChannelUninstall and NamedUser.uninstall.
ua.ChannelUninstall(client).uninstall([{"channel_id": ids[3], "device_type": "ios"}])
assert ua.ChannelInfo(client).lookup(ids[3]).installed is False
ua.NamedUser.uninstall(client, ["user-1"])
assert ua.ChannelInfo(client).lookup(ids[1]).installed is False

# Push.send() and validate(): a Live Activity update and end by name with ua.live_activity, a start as the raw
# dict the library passes through, and an ordinary alert to a tag group.
def push(notification, audience):
    p = ua.Push(client)
    p.audience = audience
    p.notification = notification
    p.device_types = ua.device_types("ios")
    return p

update = push(
    ua.notification(ios=ua.ios(live_activity=ua.live_activity(
        name="match-1", event=LiveActivityEvent.UPDATE, priority=5,
        content_state={"home": 2, "away": 1, "winProbability": 0.941},
        alert={"title": "Goal!", "body": "Foxes 2-1", "sound": "goal.caf"}, stale_date=1900000000))),
    ua.tag("fans"))
update.validate()
sent = update.send()
assert sent.ok is True and len(sent.push_ids) == 1, (sent.ok, sent.push_ids)

start = push(
    ua.notification(ios=ua.ios(live_activity={
        "event": "start", "name": "match-2", "attributes_type": "MatchAttributes",
        "attributes": {"home": "Foxes", "away": "Tigers"}, "content_state": {"home": 0, "away": 0},
        "alert": {"title": "Kick-off", "body": "Foxes v Tigers"}})),
    ua.or_(ua.ios_channel(ids[0]), ua.tag_group("loyalty", "gold")))
assert len(start.send().push_ids) == 1

end = push(
    ua.notification(ios=ua.ios(live_activity=ua.live_activity(
        name="match-1", event=LiveActivityEvent.END, content_state={"home": 3, "away": 1},
        dismissal_date=1900000000))),
    ua.and_(ua.tag("fans"), ua.not_(ua.named_user("user-9"))))
assert len(end.send().push_ids) == 1

alert = push(ua.notification(alert="Doors open at 7", ios=ua.ios(badge=3, sound="chime.caf", extra={"url": "/tickets"})), ua.all_)
assert len(alert.send().push_ids) == 1

# The report of the update, read with Blimp's extension: the content state as sent, 0.941 exactly.
request = urllib.request.Request(
    os.environ["BLIMP_URL"] + "pushes/" + sent.push_ids[0],
    headers={"Accept": "application/vnd.urbanairship+json; version=3",
             "Authorization": "Basic " + base64.b64encode(
                 (os.environ["APP_KEY"] + ":" + os.environ["MASTER_SECRET"]).encode()).decode()})
report = json.loads(urllib.request.urlopen(request).read(), parse_float=str)["push"]
assert report["state"] == "queued", report
assert report["live_activity"]["name"] == "match-1", report
state = report["request"]["notification"]["ios"]["live_activity"]["content_state"]
assert state["winProbability"] == "0.941", state

# A bad push is an AirshipFailure naming the field.
bad = push(ua.notification(ios=ua.ios(live_activity={"event": "start", "name": "x", "content_state": {}})), ua.all_)
try:
    bad.validate()
    raise AssertionError("a start without attributes was accepted")
except ua.AirshipFailure as failure:
    assert failure.error_code == 40000, failure.error_code
    assert failure.details["path"] == "notification.ios.live_activity.attributes", failure.details

print("all flows passed")
