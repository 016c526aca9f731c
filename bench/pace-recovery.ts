/**
 * `npm run bench:pace`: adaptive pacing through a receiver's outage and back, at full size — a
 * receiver that answers 429 to everything for PACE_OUTAGE_MS (5000), then takes
 * PACE_ACCEPTED_PER_S (100) requests in any second, while PACE_EVENTS (1500) events arrive at
 * PACE_POSTED_PER_S (100) (`test/support/pace-recovery.ts`; ingest and a sender in this process,
 * on REDIS_URL). Goals: the receiver sees 95 % of its rate again within 10 s of its recovery, at
 * most 5 % of requests from 3 s after it get 429, and no relapse (the stored pace stays above
 * half the receiver's rate once back). Prints the figures and writes bench-results/pace-recovery.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { startPostern } from '../test/support/postern.js';
import { runPaceRecovery } from '../test/support/pace-recovery.js';
import { REPO_ROOT } from './bench-support.js';

const options = {
  events: Number(process.env.PACE_EVENTS ?? 1500),
  postedPerSecond: Number(process.env.PACE_POSTED_PER_S ?? 100),
  outageMs: Number(process.env.PACE_OUTAGE_MS ?? 5000),
  acceptedPerSecond: Number(process.env.PACE_ACCEPTED_PER_S ?? 100),
  deadlineMs: 300_000,
};

const postern = await startPostern({ senderConcurrency: 20 });
try {
  const load = loadavg()[0]!.toFixed(1);
  const run = await runPaceRecovery(postern, options);
  const goals = {
    backWithin10s: run.backAt95 !== null && run.backAt95 <= 10_000,
    share429After3sAtMost5Percent: run.share429After3s <= 0.05,
    noRelapse: run.lowestPaceAfterBack === null || run.lowestPaceAfterBack >= options.acceptedPerSecond / 2,
  };
  console.log(`${run.line} (load average ${load} at the start)`);
  console.log(`goals: back at 95 % within 10 s ${goals.backWithin10s ? 'met' : 'MISSED'}; ≤ 5 % 429 from 3 s on ${goals.share429After3sAtMost5Percent ? 'met' : 'MISSED'}; no relapse ${goals.noRelapse ? 'met' : 'MISSED'}`);
  const dir = path.join(REPO_ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const { answers: _answers, paces: _paces, ...figures } = run;
  writeFileSync(path.join(dir, 'pace-recovery.json'), `${JSON.stringify({ options, loadAverage: Number(load), ...figures, goals }, null, 2)}\n`);
} finally {
  await postern.close();
}
