-- wrk's hooks for serve-bench (serve_bench.py fills in the texts and the request method): every request's status counted, and
-- the figures written as one WRK line and one STATUS line per status.
local texts = {TEXTS}
local i = 0
local threads = {}
setup = function(thread) table.insert(threads, thread) end
init = function(args) statuses = {} end
response = function(status, headers, body) statuses[status] = (statuses[status] or 0) + 1 end
request = function()
  i = i + 1
  local text = texts[(i % #texts) + 1]
  if MODE == "get" then
    return wrk.format("GET", "/predict?text=" .. text:gsub(" ", "%%20"))
  end
  return wrk.format("POST", "/predict", {["Content-Type"] = "application/json"},
                    '{"texts": ["' .. text .. '"]{EXTRA}}')
end
done = function(summary, latency, requests)
  local bad = summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
              + summary.errors.timeout
  io.write(string.format("WRK %d %d %.6f %.3f %.3f %.3f\n", summary.requests, bad, summary.duration / 1e6,
           latency:percentile(50) / 1000, latency:percentile(95) / 1000, latency:percentile(99) / 1000))
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do io.write(string.format("STATUS %d %d\n", status, n)) end
  end
end
