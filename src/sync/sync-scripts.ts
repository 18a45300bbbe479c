/** Lua scripts of the sync state (each runs atomically in Redis; keys in sync-keys.ts). */

/** HSETNX-or-read: claims a platform object for an entity. Returns the owner after the call. */
export const CLAIM_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then return current end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
`;

/** Deletes a field only if it still holds ARGV[2]. */
export const RELEASE_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

/**
 * Queues a lifecycle entry unless the same action is already queued for that user, with the same
 * `blocked` flag (ARGV[5]: '1' or ''): an entry that would leave the user dirty, or clean, when
 * applied is replaced by one that decides otherwise.
 */
export const PUT_LIFECYCLE_SCRIPT = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and decoded['action'] == ARGV[3] and (decoded['blocked'] == true) == (ARGV[5] == '1') then
    return 0
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', ARGV[4], ARGV[1])
return 1
`;

/**
 * Compare-and-delete (ARGV[3] empty) or compare-and-replace of a lifecycle entry; a replacement
 * takes its place in the order at ARGV[4] (its `since`). One step: an entry put back for a retry
 * is never missing in between (a sync that looked then planned as if nothing were queued).
 */
export const SETTLE_LIFECYCLE_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
  redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
end
return 1
`;

/**
 * A sync succeeded: write the status and drop the dead letter and the rate-limit loop count.
 * With ARGV[4] = '1', nothing is written unless the entity's applied record (KEYS[6]) is still
 * there: a user whose queued final lifecycle change the flusher settled (and so forgot the user)
 * between the sync's queueing and this write must not get its status back (returns -1).
 * With ARGV[5] (a platform user id), nothing is written unless a lifecycle change is still queued
 * for it (KEYS[7]): once the flusher settled the change the sync queued, the flusher records what
 * became of it (synced, or a dead letter this would drop), and a `pending` after it stood for good.
 * With ARGV[6] (the status as `retrying`, no lastError: given for a bare `pending` of a sync that
 * found a change queued), the flusher's note of that change's failed bulk calls stays while the
 * change still waits on them: the current status is `retrying` with a lastError of operation
 * ARGV[7], and the queued entry has attempts or failed calls. The status is then ARGV[6] with
 * that lastError: an operator sees why the user waits, not a bare `pending` (the sweeper syncs a
 * waiting user again and again). Read and written in one step, so a note the flusher writes
 * meanwhile is never overwritten.
 * KEYS: status hash, dead hash, dead order, dead order of the source, rate-limit loops hash,
 * applied hash, lifecycle pending hash. ARGV: entity id, status JSON, refKey, '1' or '', platform
 * id or '', the waiting status JSON or '', the flusher's operation name.
 */
export const RECORD_SYNCED_SCRIPT = `
if ARGV[4] == '1' and redis.call('HEXISTS', KEYS[6], ARGV[1]) == 0 then return -1 end
if ARGV[5] ~= '' and redis.call('HEXISTS', KEYS[7], ARGV[5]) == 0 then return -1 end
local status = ARGV[2]
if ARGV[6] ~= '' then
  local okStatus, current = pcall(cjson.decode, redis.call('HGET', KEYS[1], ARGV[1]) or '')
  local okEntry, entry = pcall(cjson.decode, redis.call('HGET', KEYS[7], ARGV[5]) or '')
  if okStatus and okEntry and type(current) == 'table' and type(entry) == 'table'
    and current['state'] == 'retrying' and type(current['lastError']) == 'table'
    and current['lastError']['operation'] == ARGV[7]
    and ((tonumber(entry['attempts']) or 0) > 0 or (tonumber(entry['failedCalls']) or 0) > 0) then
    status = string.sub(ARGV[6], 1, -2) .. ',"lastError":' .. cjson.encode(current['lastError']) .. '}'
  end
end
redis.call('HSET', KEYS[1], ARGV[1], status)
local removed = redis.call('HDEL', KEYS[2], ARGV[3])
if removed == 1 then
  redis.call('ZREM', KEYS[3], ARGV[3])
  redis.call('ZREM', KEYS[4], ARGV[3])
end
redis.call('HDEL', KEYS[5], ARGV[3])
return removed
`;

/**
 * Removes a dead letter (and the rate-limit loop count), only if it still holds ARGV[2] when
 * ARGV[2] is not empty: a letter written again by a sync since it was read stays.
 * KEYS: dead hash, rate-limit loops hash, dead order, dead order of the source. ARGV: refKey, letter JSON.
 */
export const REMOVE_DEAD_LETTER_SCRIPT = `
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
local removed = redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return removed
`;

/** Schedules late-write checks: ZADD of ARGV[2..] at ARGV[1] unless already due later. */
export const SCHEDULE_CHECK_SCRIPT = `
for i = 2, #ARGV do
  local current = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if (not current) or tonumber(current) < tonumber(ARGV[1]) then
    redis.call('ZADD', KEYS[1], ARGV[1], ARGV[i])
  end
end
return 0
`;

/**
 * A write marked before it was sent (sync-keys.ts, P:writing) is over: its marks go, and when it
 * may still land late the check of each of its entities is scheduled at ARGV[1] (a later check is
 * kept), in one step, so no reader sees neither. KEYS: writing, check. ARGV: check time or "", then
 * pairs of mark member and its refKey. Answers how many marks went.
 */
export const SETTLE_WRITE_SCRIPT = `
local removed = 0
for i = 2, #ARGV, 2 do
  if ARGV[1] ~= '' then
    local current = redis.call('ZSCORE', KEYS[2], ARGV[i + 1])
    if (not current) or tonumber(current) < tonumber(ARGV[1]) then
      redis.call('ZADD', KEYS[2], ARGV[1], ARGV[i + 1])
    end
  end
  removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
end
return removed
`;

/**
 * When no write of an entity can land late any more: the latest of its scheduled check and the
 * marks of its writes on the wire (or left by a process that died with one on it), as a string, or
 * nil. The marks are few (one per write in flight). KEYS: check, writing. ARGV: refKey.
 */
export const CHECK_DUE_AT_SCRIPT = `
local best = redis.call('ZSCORE', KEYS[1], ARGV[1])
local prefix = ARGV[1] .. '|'
local marks = redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES')
for i = 1, #marks, 2 do
  if string.sub(marks[i], 1, #prefix) == prefix then
    if (not best) or tonumber(marks[i + 1]) > tonumber(best) then best = marks[i + 1] end
  end
end
return best
`;

/**
 * Marks whose write was never settled (its process died with it on the wire) become checks once
 * due, at their own time. KEYS: writing, check. ARGV: now, limit. Answers how many moved.
 */
export const MOVE_DUE_WRITES_SCRIPT = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
for i = 1, #due, 2 do
  local ref = string.match(due[i], '^(.*)|[^|]*$')
  local current = redis.call('ZSCORE', KEYS[2], ref)
  if (not current) or tonumber(current) < tonumber(due[i + 1]) then
    redis.call('ZADD', KEYS[2], due[i + 1], ref)
  end
  redis.call('ZREM', KEYS[1], due[i])
end
return #due / 2
`;

/** Compare-and-delete of a sorted-set member: ZREM ARGV[1] only if its score is still ARGV[2]. */
export const CLEAR_CHECK_SCRIPT = `
local current = redis.call('ZSCORE', KEYS[1], ARGV[1])
if current and tonumber(current) == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
`;

/**
 * A user was synced without its manager: records it both ways, moved from the manager it was noted
 * for before (if another). KEYS: mgr:left hash, dependents of the manager, dependents of the
 * manager noted before (or the first again). ARGV: user id, manager id.
 */
export const NOTE_MANAGER_LEFT_OUT_SCRIPT = `
local before = redis.call('HGET', KEYS[1], ARGV[1])
if before and before ~= ARGV[2] then redis.call('SREM', KEYS[3], ARGV[1]) end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[1])
return 0
`;

/**
 * Drops users from a manager's dependents, and their mgr:left field where it still names that
 * manager. KEYS: mgr:left hash, dependents of the manager. ARGV: manager id, user ids...
 */
export const DROP_MANAGER_DEPENDENTS_SCRIPT = `
for i = 2, #ARGV do
  redis.call('SREM', KEYS[2], ARGV[i])
  if redis.call('HGET', KEYS[1], ARGV[i]) == ARGV[1] then redis.call('HDEL', KEYS[1], ARGV[i]) end
end
return 0
`;

/**
 * A user's applied record and whether a lifecycle change is queued for its platform user, read at
 * one instant. The flusher records a settled change in the applied record before it drops the
 * entry: read apart, a change settled between the two reads looks neither queued nor applied.
 * KEYS: applied hash, lifecycle pending hash. ARGV: entity id. Returns {record or false, 1 or 0}.
 */
export const APPLIED_WITH_LIFECYCLE_SCRIPT = `
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return {false, 0} end
local ok, record = pcall(cjson.decode, raw)
if ok and type(record) == 'table' and type(record['platformId']) == 'string'
  and redis.call('HEXISTS', KEYS[2], record['platformId']) == 1 then
  return {raw, 1}
end
return {raw, 0}
`;

/** Replaces a hash field only if it still holds ARGV[2]. KEYS: the hash. ARGV: field, as read, new. */
export const REPLACE_IF_UNCHANGED_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`;
