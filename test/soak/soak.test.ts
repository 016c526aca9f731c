import { fileURLToPath } from 'node:url';
import { runSoak, type SoakOptions, type SoakRun } from '../../scripts/soak/run-soak.js';
import { SENDER_FAULTS } from '../../scripts/soak/faults.js';
import { summaryLines, writeReport } from '../../scripts/soak/summary.js';
import type { FaultKind } from '../../scripts/soak/records.js';

/**
 * The soak's CI variant (`npm run soak` is the long one): about a minute of production per Redis
 * target with a fixed seed, every fault kind at least once, three sender processes at production
 * lock timings, redeliveries beside the originals, then every invariant of `scripts/soak/check.ts` must hold: 0 violations. The
 * standalone run always runs; the cluster run (its own cluster with replicas, started by
 * `scripts/redis-cluster.sh`) when TEST_REDIS_CLUSTER_NODES is set or CI=true.
 *
 * The two runs share nothing (each its own Redis, apps, receivers, prefix and report) and spend
 * most of their time waiting on the clock (8 events a second, the fixed retry waits), so they run
 * side by side (`test.concurrent`): the suite takes about one run's time instead of two.
 *
 * Nothing here leans on timing beyond the checker's stated tolerances; waits have deadlines.
 * Its report: `.data/soak-report-<target>.json`.
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SEED = 20261201;
const PRODUCTION_S = 60;
const DRAIN_DEADLINE_MS = 150_000;
const OPTIONS: Omit<SoakOptions, 'target'> = {
  seconds: PRODUCTION_S,
  seed: SEED,
  senders: 3,
  ratePerSecond: 8,
  longWaitMs: 20_000,
  drainDeadlineMs: DRAIN_DEADLINE_MS,
  senderConcurrency: 10,
};
/** Startup, the delivery log read back and the shutdown, on top of production and the drain. */
const OVERHEAD_MS = 90_000;
const TIMEOUT_MS = PRODUCTION_S * 1000 + DRAIN_DEADLINE_MS + OVERHEAD_MS;

const EXPECTED_FAULTS: Record<SoakOptions['target'], FaultKind[]> = {
  standalone: [...SENDER_FAULTS, 'redis-client-kill', 'redis-restart'],
  cluster: [...SENDER_FAULTS, 'redis-client-kill', 'redis-failover', 'redis-primary-stop'],
};

function expectClean(run: SoakRun): void {
  const summary = summaryLines(run).join('\n');
  console.info(`${summary}\n  report: ${writeReport(REPO_ROOT, run)}`);
  // Every fault kind of the target was injected, and each ran to its end.
  expect(EXPECTED_FAULTS[run.options.target].filter((k) => !run.faultsByKind[k])).toEqual([]);
  expect(run.faultErrors).toEqual([]);
  // The run did something: events accepted and delivered.
  expect(run.result.metrics.acceptedEvents).toBeGreaterThan(100);
  // Redeliveries made beside the originals (about one a second), each checked like them.
  expect(run.result.metrics.redeliveries).toBeGreaterThan(10);
  if (run.result.violations.length > 0) throw new Error(`soak ${run.options.target}: ${run.result.violations.length} violation(s)\n${summary}`);
  // Everything ingest wrote was finished within the drain: also the deliveries of events whose
  // producer got no 202, which the checker does not follow.
  if (!run.drained) throw new Error(`soak ${run.options.target}: the drain reached its deadline\n${run.drainLeftovers.join('\n')}\n${summary}`);
}

/** Runs the soak on `target`, its progress lines marked with the target (the two runs interleave). */
function soak(target: SoakOptions['target']): Promise<SoakRun> {
  return runSoak({ ...OPTIONS, target, log: (line) => process.stdout.write(`[soak ${target}] ${line}\n`) });
}

test.concurrent('soak on standalone Redis: 3 senders, every fault kind, 0 violations', async () => {
  expectClean(await soak('standalone'));
}, TIMEOUT_MS);

const withCluster = Boolean(process.env.TEST_REDIS_CLUSTER_NODES) || process.env.CI === 'true';
if (!withCluster) console.warn('soak on Redis Cluster: skipped (set TEST_REDIS_CLUSTER_NODES or CI=true; it starts its own cluster)');
(withCluster ? test.concurrent : test.skip)('soak on Redis Cluster (own cluster, one replica per master): 3 senders, every fault kind, 0 violations', async () => {
  expectClean(await soak('cluster'));
}, TIMEOUT_MS);
