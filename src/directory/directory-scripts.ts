/**
 * The directory's Lua scripts. Each accepted write is exactly one script, so the document, its
 * indexes, the generation and the dirty marker change together or not at all. Keys are built from
 * the per-source base passed in ARGV (all keys share the prefix's hash tag, so they are in one
 * Cluster slot); KEYS[1] is always the entity's hash, which also routes the call. Key layout:
 * directory-keys.ts.
 */

/**
 * Lua `recordDeletion(key, at, ttlSeconds)`: sets a deletion record (directory-keys.ts) to `at`
 * (epoch ms, as a string) with its TTL, unless it already holds a later time, so a record is never
 * moved back. Prepended to every script that writes deletion records (DELETE_ENTITY here, and the
 * hooks' state store for deletions of users the directory does not hold).
 */
export const RECORD_DELETION_LUA = `
local function recordDeletion(key, at, ttl)
  local old = tonumber(redis.call('GET', key))
  if not old or old < tonumber(at) then redis.call('SET', key, at, 'EX', ttl) end
end
`;

/** Helpers shared by the scripts (prepended to each). */
const COMMON = `
-- A WriteGuard (directory-types.ts) as JSON, or nil; guardHolds before any write, applyGuard after.
local function readGuard(arg)
  if not arg or arg == '' then return nil end
  return cjson.decode(arg)
end
local function guardHolds(g)
  return (redis.call('HGET', g.key, 'n') or '0') == g.expected
end
local function applyGuard(g, version)
  local args = {}
  for f, v in pairs(g.fields) do args[#args + 1] = f; args[#args + 1] = v end
  if g.versionField and version then args[#args + 1] = g.versionField; args[#args + 1] = version end
  if #args > 0 then redis.call('HSET', g.key, unpack(args)) end
  redis.call('HINCRBY', g.key, 'n', 1)
  redis.call('EXPIRE', g.key, g.ttlSeconds)
end
local function dropIndexes(base, kind, id, iu, ie, im)
  local nameIdx = base .. (kind == 'user' and ':user:idx:userName' or ':group:idx:displayName')
  local extIdx = base .. ':' .. kind .. ':idx:externalId'
  if iu and redis.call('HGET', nameIdx, iu) == id then redis.call('HDEL', nameIdx, iu) end
  if ie and ie ~= '' and redis.call('HGET', extIdx, ie) == id then redis.call('HDEL', extIdx, ie) end
  if im and im ~= '' then
    for _, e in ipairs(cjson.decode(im)) do redis.call('SREM', base .. ':user:idx:email:' .. e, id) end
  end
end
`;

/**
 * Create or update (replace, PATCH) a user or group, with an optional membership change.
 * ARGV: base, kind, id, mode(create|update), expectedGen(''=any), docJson, nameKey, externalId(''),
 *       emailsJson, nowIso, nowMs, dirtyKey, refKey, sameAt(''=none), legacyNameKey(''=none),
 *       memberMode(none|change), guardJson(''=none), hasReplace(0|1), nReplace, nAdd, nRemove, ...ids
 * `legacyNameKey` is the name's key as indexes held it before names were case-folded with NFC
 * (case-fold.ts legacyFold; only for a non-ASCII name whose forms differ): an entry of another
 * entity under it is a conflict too.
 * `sameAt` is the generation at which the caller found the stored document equal to docJson. When
 * the entity is still at that generation and the membership change leaves the member set as it is,
 * the write changes nothing (the one "no change" rule, redis-directory-store.ts): nothing is
 * written, the generation, modified time and dirty marker stay, the guard is neither checked nor
 * applied, and the answer is 'unchanged'. Decided here, atomically with the member set it reads.
 * Returns {'ok'|'unchanged', gen, created, modified, memberCount, userGroupIds} | {'notfound'} |
 *         {'version', gen} | {'conflict', 'name'|'externalId'} | {'unknown', {ids}} | {'exists'} |
 *         {'guard'}
 */
export const PUT_ENTITY = `${COMMON}
local h = KEYS[1]
local base, kind, id, mode, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local doc, nameKey, ext, emails = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local nowIso, nowMs, dirty, ref, sameAt = ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local legacyName, memberMode = ARGV[15], ARGV[16]
local guard = readGuard(ARGV[17])
local nameIdx = base .. (kind == 'user' and ':user:idx:userName' or ':group:idx:displayName')
local extIdx = base .. ':' .. kind .. ':idx:externalId'
local members = base .. ':group:' .. id .. ':members'

local replace, add, remove = nil, {}, {}
if memberMode == 'change' then
  local nR, nA, nD = tonumber(ARGV[19]), tonumber(ARGV[20]), tonumber(ARGV[21])
  local i = 22
  if ARGV[18] == '1' then replace = {} end
  for _ = 1, nR do replace[#replace + 1] = ARGV[i]; i = i + 1 end
  for _ = 1, nA do add[#add + 1] = ARGV[i]; i = i + 1 end
  for _ = 1, nD do remove[#remove + 1] = ARGV[i]; i = i + 1 end
end

-- Whether every id of a list is (want = true) or is not (want = false) in the group's member set.
local function allMembership(list, want)
  local i = 1
  while i <= #list do
    local chunk = {unpack(list, i, math.min(i + 499, #list))}
    i = i + 500
    for _, flag in ipairs(redis.call('SMISMEMBER', members, unpack(chunk))) do
      if (flag == 1) ~= want then return false end
    end
  end
  return true
end

-- Whether the membership change leaves the member set as it is: (replace or the current set),
-- plus add, minus remove, equals the current set.
local function keepsMembers()
  if memberMode ~= 'change' then return true end
  local removed = {}
  for _, u in ipairs(remove) do removed[u] = true end
  local kept, seen = {}, {}
  for _, list in ipairs({replace or {}, add}) do
    for _, u in ipairs(list) do
      if not removed[u] and not seen[u] then seen[u] = true; kept[#kept + 1] = u end
    end
  end
  if replace then
    return #kept == redis.call('SCARD', members) and allMembership(kept, true)
  end
  return allMembership(kept, true) and allMembership(remove, false)
end

if mode == 'create' then
  if redis.call('EXISTS', h) == 1 then return {'exists'} end
else
  local cur = redis.call('HMGET', h, 'gen', 'tomb', 'created', 'modified')
  if not cur[1] or cur[2] then return {'notfound'} end
  if expected ~= '' and cur[1] ~= expected then return {'version', cur[1]} end
  if sameAt ~= '' and cur[1] == sameAt and keepsMembers() then
    local count, groups = 0, {}
    if kind == 'group' then count = redis.call('SCARD', members) end
    if kind == 'user' then groups = redis.call('SMEMBERS', base .. ':user:' .. id .. ':groups') end
    return {'unchanged', tonumber(cur[1]), cur[3], cur[4], count, groups}
  end
end
if guard and not guardHolds(guard) then return {'guard'} end

local owner = redis.call('HGET', nameIdx, nameKey)
if owner and owner ~= id then return {'conflict', 'name'} end
if legacyName ~= '' then
  owner = redis.call('HGET', nameIdx, legacyName)
  if owner and owner ~= id then return {'conflict', 'name'} end
end
if ext ~= '' then
  owner = redis.call('HGET', extIdx, ext)
  if owner and owner ~= id then return {'conflict', 'externalId'} end
end

if memberMode == 'change' then
  local users = base .. ':user:ids'
  local unknown = {}
  local seen = {}
  local function check(list)
    local batch = {}
    local function flush()
      if #batch == 0 then return end
      local scores = redis.call('ZMSCORE', users, unpack(batch))
      for j = 1, #batch do
        if not scores[j] then unknown[#unknown + 1] = batch[j] end
      end
      batch = {}
    end
    for _, u in ipairs(list) do
      if not seen[u] then
        seen[u] = true
        batch[#batch + 1] = u
        if #batch == 500 then flush() end
      end
    end
    flush()
  end
  if replace then check(replace) end
  check(add)
  if #unknown > 0 then return {'unknown', unknown} end
end

if mode == 'update' then
  local old = redis.call('HMGET', h, 'iu', 'ie', 'im')
  dropIndexes(base, kind, id, old[1], old[2], old[3])
else
  local seq = redis.call('INCR', base .. ':seq')
  redis.call('ZADD', base .. ':' .. kind .. ':ids', seq, id)
  redis.call('HSET', h, 'created', nowIso)
end
redis.call('HSET', nameIdx, nameKey, id)
if ext ~= '' then redis.call('HSET', extIdx, ext, id) end
for _, e in ipairs(cjson.decode(emails)) do redis.call('SADD', base .. ':user:idx:email:' .. e, id) end
redis.call('HSET', h, 'doc', doc, 'modified', nowIso, 'iu', nameKey, 'ie', ext, 'im', emails)
local gen = redis.call('HINCRBY', h, 'gen', 1)
if guard then applyGuard(guard, id .. ':W/"' .. gen .. '"') end

local memberCount = 0
if kind == 'group' then
  -- Members change in chunks: one SMISMEMBER and one SADD/SREM on the group's set per chunk, then
  -- the reverse link (each user's groups set) of only those that changed.
  local function change(list, linking)
    local i = 1
    while i <= #list do
      local chunk = {unpack(list, i, math.min(i + 499, #list))}
      i = i + 500
      local flags = redis.call('SMISMEMBER', members, unpack(chunk))
      local changed = {}
      for j = 1, #chunk do
        if (flags[j] == 0) == linking then changed[#changed + 1] = chunk[j] end
      end
      if #changed > 0 then
        redis.call(linking and 'SADD' or 'SREM', members, unpack(changed))
        for _, u in ipairs(changed) do
          redis.call(linking and 'SADD' or 'SREM', base .. ':user:' .. u .. ':groups', id)
        end
      end
    end
  end
  if replace then
    local want, have, drop, join = {}, {}, {}, {}
    for _, u in ipairs(replace) do want[u] = true end
    for _, u in ipairs(redis.call('SMEMBERS', members)) do
      have[u] = true
      if not want[u] then drop[#drop + 1] = u end
    end
    for _, u in ipairs(replace) do
      if not have[u] then join[#join + 1] = u end
    end
    change(drop, false)
    change(join, true)
  end
  change(add, true)
  change(remove, false)
  memberCount = redis.call('SCARD', members)
end

redis.call('ZADD', dirty, 'NX', nowMs, ref)
local groups = {}
if kind == 'user' then groups = redis.call('SMEMBERS', base .. ':user:' .. id .. ':groups') end
return {'ok', gen, redis.call('HGET', h, 'created'), nowIso, memberCount, groups}
`;

/**
 * Delete a user or group: drop indexes and membership (both directions), leave a tombstone.
 * Deleting a user bumps the generation of each of its groups and marks them dirty.
 * A user's deletion is recorded by its externalId and userName (directory-keys.ts, deletion
 * records: digests, with a TTL), dated `deletedAt` (epoch ms; the caller's time of the change) and
 * never moved back by an earlier date.
 * ARGV: base, kind, id, expectedGen(''=any), nowIso, nowMs, dirtyKey, refKey, groupRefPrefix,
 *       deletedAt, deletionTtlSeconds, deletionBase, guardJson(''=none)
 * Returns {'ok', gen, {touchedGroupIds}} | {'notfound'} | {'version', gen} | {'guard'}
 */
export const DELETE_ENTITY = `${COMMON}${RECORD_DELETION_LUA}
local h = KEYS[1]
local base, kind, id, expected = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local nowIso, nowMs, dirty, ref, groupRefPrefix = ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local deletedAt, deletionTtl = tonumber(ARGV[10]), tonumber(ARGV[11])
local cur = redis.call('HMGET', h, 'gen', 'tomb', 'iu', 'ie', 'im')
if not cur[1] or cur[2] then return {'notfound'} end
if expected ~= '' and cur[1] ~= expected then return {'version', cur[1]} end
local guard = readGuard(ARGV[13])
if guard and not guardHolds(guard) then return {'guard'} end
if guard then applyGuard(guard, nil) end
if kind == 'user' and deletedAt and deletionTtl and deletionTtl > 0 then
  local function remember(by, value)
    if not value or value == '' then return end
    recordDeletion(ARGV[12] .. ':user:' .. by .. ':' .. redis.sha1hex(value), ARGV[10], deletionTtl)
  end
  remember('ext', cur[4])
  remember('name', cur[3])
end
dropIndexes(base, kind, id, cur[3], cur[4], cur[5])
redis.call('ZREM', base .. ':' .. kind .. ':ids', id)
local touched = {}
if kind == 'user' then
  local gk = base .. ':user:' .. id .. ':groups'
  for _, g in ipairs(redis.call('SMEMBERS', gk)) do
    redis.call('SREM', base .. ':group:' .. g .. ':members', id)
    local gh = base .. ':group:' .. g
    local st = redis.call('HMGET', gh, 'gen', 'tomb')
    if st[1] and not st[2] then
      redis.call('HINCRBY', gh, 'gen', 1)
      redis.call('HSET', gh, 'modified', nowIso)
      redis.call('ZADD', dirty, 'NX', nowMs, groupRefPrefix .. g)
      touched[#touched + 1] = g
    end
  end
  redis.call('DEL', gk)
else
  local mk = base .. ':group:' .. id .. ':members'
  for _, u in ipairs(redis.call('SMEMBERS', mk)) do
    redis.call('SREM', base .. ':user:' .. u .. ':groups', id)
  end
  redis.call('DEL', mk)
end
redis.call('HDEL', h, 'doc', 'iu', 'ie', 'im')
redis.call('HSET', h, 'tomb', '1', 'modified', nowIso)
local gen = redis.call('HINCRBY', h, 'gen', 1)
redis.call('ZADD', dirty, 'NX', nowMs, ref)
return {'ok', gen, touched}
`;

/**
 * Clear the dirty marker if the entity is still at the generation the sync applied (or is gone).
 * ARGV: dirtyKey, refKey, generation. Returns 1 if a marker was removed.
 */
export const MARK_CLEAN = `
local gen = redis.call('HGET', KEYS[1], 'gen')
if gen and gen ~= ARGV[3] then return 0 end
return redis.call('ZREM', ARGV[1], ARGV[2])
`;

/**
 * Remove a tombstone and every key it still has, if still at `generation`; clears its dirty marker,
 * or, given `syncAgainAt` (epoch ms), keeps it (set at that time if absent) for the sync of the
 * absent entity that drops its sync state (a crash after the purge must not lose that sync).
 * ARGV: dirtyKey, refKey, generation, extraKey (user's groups set or group's members set),
 *       syncAgainAt (''=clear the marker). Returns 1 if purged.
 */
export const PURGE_TOMBSTONE = `
local cur = redis.call('HMGET', KEYS[1], 'gen', 'tomb')
if not cur[1] or not cur[2] or cur[1] ~= ARGV[3] then return 0 end
redis.call('DEL', KEYS[1], ARGV[4])
if ARGV[5] and ARGV[5] ~= '' then
  redis.call('ZADD', ARGV[1], 'NX', ARGV[5], ARGV[2])
else
  redis.call('ZREM', ARGV[1], ARGV[2])
end
return 1
`;
