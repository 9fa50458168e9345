"""The official Airship Python library, unmodified, against Blimp.

Run by AirshipLibraryTests with BLIMP_URL (ending in /api/), APP_KEY, MASTER_SECRET and CHANNEL_IDS (five channels
already registered). Exits non-zero on the first failed check.
"""
import datetime
import os

import urbanairship as ua
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

print("all flows passed")
