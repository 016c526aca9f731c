import { createKeySchema, STATS_TTL_S } from './keys.js';
import type { RedisClient } from './redis-connection.js';
import { StatsFlusher, type FlushTimers } from './stats-flusher.js';

const keys = createKeySchema('t');
const hour = Date.UTC(2026, 11, 2, 3, 0, 0);
const at = (minute: number) => hour + minute * 60_000 + 1_000;
const epKey = (org: string, ep: string) => keys.statsHour(org, 'endpoint', ep, hour);
const orgKey = (org: string) => keys.statsHour(org, 'org', org, hour);

type Command = [string, ...(string | number)[]];

/**
 * A Redis double that records each pipeline it runs; `answer` decides each pipeline's replies
 * (throw = the pipeline failed as a whole; an Error in a reply = Redis refused that command).
 */
function fakeRedis(answer: (commands: Command[]) => (Error | null)[] = (c) => c.map(() => null)) {
  const pipelines: Command[][] = [];
  const redis = {
    pipeline() {
      const commands: Command[] = [];
      const p = {
        hincrby: (key: string, field: string, n: number) => (commands.push(['hincrby', key, field, n]), p),
        expire: (key: string, ttlS: number) => (commands.push(['expire', key, ttlS]), p),
        exec: async () => {
          const errors = answer(commands);
          pipelines.push(commands);
          return errors.map((err) => [err, err ? null : 1]);
        },
      };
      return p;
    },
  };
  return { redis: redis as unknown as RedisClient, pipelines };
}

/** A Redis double whose pipelines fail as a whole (the connection lost) until `comeBack()`. */
function redisThatIsDown() {
  let down = true;
  const fake = fakeRedis((commands) => {
    if (down) throw new Error('connection lost');
    return commands.map(() => null);
  });
  return { ...fake, comeBack: () => void (down = false) };
}

function manualTimers() {
  const ticks: { tick: () => void; ms: number }[] = [];
  let cleared = 0;
  const timers: FlushTimers = { setInterval: (tick, ms) => ticks.push({ tick, ms }), clearInterval: () => void cleared++ };
  return { timers, ticks, cleared: () => cleared };
}

const warnings = () => {
  const lines: string[] = [];
  return { logger: { warn: (_fields: object, message: string) => void lines.push(message) }, lines };
};

test('one pipeline per org: each counter summed into one HINCRBY, then an EXPIRE of each hash written and of each feed appended to', async () => {
  const { redis, pipelines } = fakeRedis();
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 1000, ttlS: 3600 }, intervalMs: 0 });
  for (let i = 0; i < 3; i++) flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(12) });
  for (let i = 0; i < 2; i++) flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'pending', error: 'http_502', nowMs: at(12) });
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'cancelled', error: null, nowMs: at(12) });
  flusher.countAttempt({ orgId: 'o2', endpointId: 'e2', nextStatus: 'failed', error: 'timeout', nowMs: at(13) });
  flusher.feedAppended('o1');
  flusher.feedAppended('o1');
  await flusher.flush();

  expect(pipelines).toHaveLength(2);
  const [o1, o2] = pipelines;
  expect(o1).toEqual([
    ['hincrby', epKey('o1', 'e1'), '12:ok', 3],
    ['hincrby', orgKey('o1'), '12:ok', 3],
    ['hincrby', epKey('o1', 'e1'), '12:fail', 2],
    ['hincrby', epKey('o1', 'e1'), '12:e:http_502', 2],
    ['hincrby', orgKey('o1'), '12:fail', 2],
    ['hincrby', orgKey('o1'), '12:e:http_502', 2],
    ['expire', epKey('o1', 'e1'), STATS_TTL_S],
    ['expire', orgKey('o1'), STATS_TTL_S],
    ['expire', keys.orgLiveFeed('o1'), 3600],
  ]);
  expect(o2).toEqual([
    ['hincrby', epKey('o2', 'e2'), '13:fail', 1],
    ['hincrby', epKey('o2', 'e2'), '13:e:timeout', 1],
    ['hincrby', orgKey('o2'), '13:fail', 1],
    ['hincrby', orgKey('o2'), '13:e:timeout', 1],
    ['expire', epKey('o2', 'e2'), STATS_TTL_S],
    ['expire', orgKey('o2'), STATS_TTL_S],
  ]);
  // Every key of a pipeline carries its org's hash tag: one slot on Redis Cluster.
  for (const [i, org] of ['o1', 'o2'].entries()) expect(pipelines[i]!.every(([, key]) => String(key).includes(`{o:${org}}`))).toBe(true);

  // Nothing counted since: nothing sent.
  await flusher.flush();
  expect(pipelines).toHaveLength(2);
});

test('writes on its timer, every second by default; close stops it and writes what is left', async () => {
  const { redis, pipelines } = fakeRedis();
  const { timers, ticks, cleared } = manualTimers();
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 1000, ttlS: 3600 }, timers });
  expect(ticks.map((t) => t.ms)).toEqual([1000]);
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(1) });
  ticks[0]!.tick();
  await flusher.flush();
  expect(pipelines).toHaveLength(1);

  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(1) });
  await flusher.close();
  expect(cleared()).toBe(1);
  expect(pipelines).toHaveLength(2);
  expect(pipelines[1]![0]).toEqual(['hincrby', epKey('o1', 'e1'), '1:ok', 1]);
});

test('a write that fails keeps its counts: the next one sends them summed with the new, and the failure is logged once', async () => {
  const { redis, pipelines, comeBack } = redisThatIsDown();
  const { logger, lines } = warnings();
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 1000, ttlS: 3600 }, intervalMs: 0, logger });
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(5) });
  flusher.feedAppended('o1');
  await flusher.flush();
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(5) });
  await flusher.flush();
  expect(pipelines).toHaveLength(0);
  expect(flusher.pendingFields).toBe(2);
  expect(lines).toEqual(['attempt counters could not be written; kept for the next flush']);

  comeBack();
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(5) });
  await flusher.flush();
  expect(pipelines).toEqual([
    [
      ['hincrby', epKey('o1', 'e1'), '5:ok', 3],
      ['hincrby', orgKey('o1'), '5:ok', 3],
      ['expire', epKey('o1', 'e1'), STATS_TTL_S],
      ['expire', orgKey('o1'), STATS_TTL_S],
      ['expire', keys.orgLiveFeed('o1'), 3600],
    ],
  ]);
  expect(flusher.pendingFields).toBe(0);
});

test('a command Redis refuses is sent again at the next write, and only that one', async () => {
  let refuse = true;
  const { redis, pipelines } = fakeRedis((commands) => commands.map(([, key, field]) => (refuse && key === orgKey('o1') && field === '7:ok' ? new Error('OOM command not allowed') : null)));
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 1000, ttlS: 3600 }, intervalMs: 0 });
  flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(7) });
  await flusher.flush();
  refuse = false;
  await flusher.flush();
  expect(pipelines[1]).toEqual([
    ['hincrby', orgKey('o1'), '7:ok', 1],
    ['expire', orgKey('o1'), STATS_TTL_S],
  ]);
});

test('while Redis does not take them, at most maxPendingFields counters are kept: the oldest go, logged once', async () => {
  const { redis, pipelines, comeBack } = redisThatIsDown();
  const { logger, lines } = warnings();
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 1000, ttlS: 3600 }, intervalMs: 0, maxPendingFields: 4, logger });
  // Each success is 2 counters (endpoint, org): minutes 1 and 2 fill the cap, 3 and 4 push them out.
  for (const minute of [1, 2]) flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(minute) });
  await flusher.flush();
  for (const minute of [3, 4]) flusher.countAttempt({ orgId: 'o1', endpointId: 'e1', nextStatus: 'succeeded', error: null, nowMs: at(minute) });
  expect(flusher.pendingFields).toBe(4);
  expect(lines.filter((l) => l.startsWith('attempt counters dropped'))).toHaveLength(1);

  comeBack();
  await flusher.flush();
  expect(pipelines[0]!.filter(([cmd]) => cmd === 'hincrby').map(([, , field]) => field)).toEqual(['3:ok', '3:ok', '4:ok', '4:ok']);
});

test('with the live feed off, a finish renews no feed expiry', async () => {
  const { redis, pipelines } = fakeRedis();
  const flusher = new StatsFlusher({ redis, keys, liveFeed: { maxEntries: 0, ttlS: 3600 }, intervalMs: 0 });
  flusher.feedAppended('o1');
  await flusher.flush();
  expect(pipelines).toEqual([]);
});
