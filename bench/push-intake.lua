-- wrk script for bench/push-intake.sh: POST /api/push, a Live Activity update by name to a tag audience. Names cycle
-- through 1,000 activities (a name's pushes to one audience get strictly increasing timestamps, so one name at
-- thousands a second would run its timestamps ahead of the clock). Counts answers by status and prints them at the end.
local counter = 0
statuses = {}
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Authorization"] = os.getenv("BENCH_AUTHORIZATION")
  wrk.headers["Accept"] = "application/vnd.urbanairship+json; version=3;"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local body = string.format(
    '{"audience":{"tag":"fans","group":"teams"},"device_types":["ios"],"notification":{"ios":{"live_activity":'
    .. '{"event":"update","name":"match-%d","priority":5,"content_state":{"home":%d,"away":1,"minute":%d}}}}}',
    counter % 1000, counter % 7, counter % 90)
  return wrk.format(nil, "/api/push", nil, body)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local line = "statuses:"
  for _, thread in ipairs(threads) do
    local counts = thread:get("statuses")
    for status, count in pairs(counts) do line = line .. string.format(" %d=%d", status, count) end
  end
  io.write(line .. "\n")
  io.write(string.format("p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
