/**
 * `npm run soak`: Postern's promises under several sender processes and faults.
 *
 * Starts its own Redis (standalone with AOF, or a cluster with replicas), ingest and N senders as
 * processes, a receiver per endpoint on 127.0.0.1 (500s, stalls past the timeout, 429 +
 * Retry-After, dropped connections — seeded), a steady producer, redeliveries of what it sent to
 * three endpoints (some still waiting for a retry, some of earlier redeliveries), and seeded faults (sender SIGKILL
 * and SIGTERM with restart, CLIENT KILL, Redis restart from its AOF, cluster failover and primary
 * stop). Then it stops producing, waits for every accepted event to be terminal, reads the
 * delivery log back through the API and checks the invariants (`scripts/soak/check.ts`).
 * Prints a summary, writes `.data/soak-report-<target>.json` (and the records it checked,
 * `.data/soak-records-<target>.json`), exits 1 on any violation or a drain that reached its deadline. `--check=<records file>` checks a
 * run's kept records again (after a change of the checker), starting nothing.
 *
 * Options (environment, or `--seconds=`, `--seed=`, `--senders=`, `--target=`, `--rate=`):
 *   SOAK_SECONDS   production phase, s (default 1800)
 *   SOAK_SEED      seed of every random choice (default: random, printed; replay a run with it)
 *   SOAK_SENDERS   sender processes, ≥ 3 (default 3)
 *   SOAK_TARGET    standalone | cluster | both (default standalone)
 *   SOAK_RATE      steady events/s (default 25; bursts come on top)
 *   SOAK_REDELIVERY_RATE  redeliveries asked for per second, at the endpoints that offer them
 *                  while pending (default SOAK_RATE / 10, at least 1; 0: none)
 *   SOAK_LONG_WAIT_MS  the burst-retry endpoint's wait before attempt 2 (default 60000)
 *   SOAK_DRAIN_DEADLINE_MS  how long the drain may take (default 600000)
 *   SOAK_FAST_LOCKS=1  senders with a 5-s job lock and 1-s stalled check instead of production's 30 s
 *   SOAK_LOG_LEVEL  the apps' LOG_LEVEL (default warn); their output is kept in `.data/soak-logs-<target>/`
 */
import { fileURLToPath } from 'node:url';
import { runSoak, type SoakOptions } from './soak/run-soak.js';
import { readRecords, summaryLines, writeReport } from './soak/summary.js';
import { checkSoak } from './soak/check.js';

const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

function setting(name: string, flag: string): string | undefined {
  const arg = process.argv.find((a) => a.startsWith(`--${flag}=`));
  return arg ? arg.slice(flag.length + 3) : process.env[name];
}

function intSetting(name: string, flag: string, fallback: number): number {
  const raw = setting(name, flag);
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name}: not a number: ${raw}`);
  return n;
}

/** `--check=<file>`: the invariants checked again on a run's kept records, nothing started. */
function checkAgain(file: string): number {
  const result = checkSoak(readRecords(file));
  console.log(`[soak] ${file}: ${result.violations.length} violation(s)`);
  for (const v of result.violations) console.log(`  ${v.kind} ${v.id}: ${v.detail}`);
  return result.violations.length > 0 ? 1 : 0;
}

async function main(): Promise<number> {
  const recheck = setting('SOAK_CHECK', 'check');
  if (recheck) return checkAgain(recheck);
  const seed = intSetting('SOAK_SEED', 'seed', Math.floor(Math.random() * 2 ** 31));
  const targetSetting = setting('SOAK_TARGET', 'target') ?? 'standalone';
  if (!['standalone', 'cluster', 'both'].includes(targetSetting)) throw new Error(`SOAK_TARGET must be standalone, cluster or both, got ${targetSetting}`);
  const targets = targetSetting === 'both' ? (['standalone', 'cluster'] as const) : [targetSetting as 'standalone' | 'cluster'];
  const base: Omit<SoakOptions, 'target'> = {
    seconds: intSetting('SOAK_SECONDS', 'seconds', 1800),
    seed,
    senders: intSetting('SOAK_SENDERS', 'senders', 3),
    ratePerSecond: intSetting('SOAK_RATE', 'rate', 25),
    ...(setting('SOAK_REDELIVERY_RATE', 'redelivery-rate') ? { redeliveriesPerSecond: intSetting('SOAK_REDELIVERY_RATE', 'redelivery-rate', 0) } : {}),
    longWaitMs: intSetting('SOAK_LONG_WAIT_MS', 'long-wait-ms', 60_000),
    drainDeadlineMs: intSetting('SOAK_DRAIN_DEADLINE_MS', 'drain-deadline-ms', 600_000),
    senderEnv: process.env.SOAK_FAST_LOCKS === '1' ? { JOB_LOCK_DURATION_MS: '5000', STALLED_CHECK_INTERVAL_MS: '1000' } : {},
    log: (line) => process.stdout.write(`[soak] ${line}\n`),
  };
  console.log(`[soak] SOAK_SEED=${seed} SOAK_SECONDS=${base.seconds} SOAK_SENDERS=${base.senders} SOAK_TARGET=${targetSetting}`);
  let failed = false;
  for (const target of targets) {
    const run = await runSoak({ ...base, target });
    for (const line of summaryLines(run)) console.log(line);
    console.log(`  report: ${writeReport(REPO_ROOT, run)}`);
    if (run.result.violations.length > 0 || !run.drained) failed = true;
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error('[soak] failed:', err);
    process.exit(2);
  },
);
