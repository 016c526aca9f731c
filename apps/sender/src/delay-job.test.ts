import { pino } from 'pino';
import { DELAY_JOB_RETRY_FOR_MS, moveJobToDelayed } from './delay-job.js';

/** A job whose `moveToDelayed` answers with `answers` in turn (an Error rejects), then resolves. */
function fakeJob(answers: (Error | null)[]) {
  const calls: number[] = [];
  return {
    calls,
    job: {
      id: 'dlv_1',
      async moveToDelayed(atMs: number) {
        calls.push(atMs);
        const answer = answers.shift();
        if (answer) throw answer;
      },
    },
  };
}

/** A clock that a fake sleep moves forward: no real waiting. */
function fakeTime() {
  let now = 1_800_000_000_000;
  return { clock: { now: () => now }, sleep: async (ms: number) => void (now += ms), logger: pino({ level: 'silent' }) };
}

test('a move refused by Redis trouble is tried again until it goes through', async () => {
  const { job, calls } = fakeJob([new Error('CLUSTERDOWN The cluster is down'), new Error('Connection is closed.'), null]);
  await expect(moveJobToDelayed(job, 42, 'token', fakeTime())).resolves.toBe(true);
  expect(calls).toEqual([42, 42, 42]);
});

test('a job no longer this worker\'s (lock taken over, gone) is left alone at once', async () => {
  for (const message of ['Missing lock for job dlv_1. moveToDelayed', 'Lock mismatch for job dlv_1. Cmd moveToDelayed from active', 'Missing key for job dlv_1. moveToDelayed', 'Job dlv_1 is not in the active state. moveToDelayed']) {
    const { job, calls } = fakeJob([new Error(message), null]);
    await expect(moveJobToDelayed(job, 42, 'token', fakeTime())).resolves.toBe(false);
    expect(calls).toHaveLength(1);
  }
});

test('never rejects: after the retry window it gives the job up to its lock lapsing', async () => {
  const { job, calls } = fakeJob(Array.from({ length: 1000 }, () => new Error('READONLY You can\'t write against a read only replica.')));
  const time = fakeTime();
  const started = time.clock.now();
  await expect(moveJobToDelayed(job, 42, 'token', time)).resolves.toBe(false);
  expect(time.clock.now() - started).toBeLessThanOrEqual(DELAY_JOB_RETRY_FOR_MS);
  expect(calls.length).toBeGreaterThan(5);
});
