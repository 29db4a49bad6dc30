-- wrk script for tools/bench/ingest/run and tools/bench/table: posts pre-generated gzip'd reports (or Sentry
-- envelopes, with SENTRY_PROJECT), each at most once.
-- Bodies come from the file named by BODIES (written by `ingest-bench --emit-bodies`); thread i of N
-- sends bodies i, i+N, i+2N, ... so that no two requests carry the same event id.
local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

function init(args)
  local f = assert(io.open(os.getenv("BODIES"), "rb"))
  local data = f:read("*a")
  f:close()
  bodies = {}
  local pos, n = 1, 0
  local stride = tonumber(os.getenv("THREADS"))
  while pos <= #data do
    local b1, b2, b3, b4 = data:byte(pos, pos + 3)
    local len = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    if n % stride == id then table.insert(bodies, data:sub(pos + 4, pos + 3 + len)) end
    pos = pos + 4 + len
    n = n + 1
  end
  next_body = 1
  -- SENTRY_PROJECT set: the bodies are Sentry envelopes (sentry_bodies.py), posted as sentry-sdk does.
  local sentry = os.getenv("SENTRY_PROJECT")
  if sentry then
    path = "/api/" .. sentry .. "/envelope/"
    headers = {
      ["X-Sentry-Auth"] = "Sentry sentry_version=7, sentry_key=" .. os.getenv("KEY") .. ", sentry_client=wrk/1",
      ["Content-Type"] = "application/x-sentry-envelope",
      ["Content-Encoding"] = "gzip",
    }
  else
    path = "/api/v1/reports"
    headers = {
      ["Authorization"] = "Bearer " .. os.getenv("KEY"),
      ["Content-Type"] = "application/json",
      ["Content-Encoding"] = "gzip",
    }
  end
end

function request()
  local body = bodies[next_body]
  if body == nil then
    body = bodies[#bodies]  -- out of fresh bodies: repeats are answered 202 as duplicates
  else
    next_body = next_body + 1
  end
  return wrk.format("POST", path, headers, body)
end

function done(summary, latency, requests)
  io.write(string.format("non-2xx or errors: %d\n", summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
