/** The soak's printed summary and its JSON report. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { IDS_PER_KIND, RATE_SLACK, SCHEDULE_TOLERANCE_MS, SOAK_MAX_RESUME_MS, VIOLATION_KINDS } from './check.js';
import type { SoakRun } from './run-soak.js';
import type { DeliveryLog, SoakRecords } from './records.js';

/** The summary of `run` as lines: seed, duration, counts, faults, peaks, violations by kind with ids. */
export function summaryLines(run: SoakRun): string[] {
  const { options: o, result } = run;
  const m = result.metrics;
  const lines = [
    `soak ${o.target}: seed ${o.seed}, ${o.seconds} s of production + ${Math.round(run.drainMs / 1000)} s drain${run.drained ? '' : ' (drain deadline reached)'}, ${Math.round((run.endedAtMs - run.startedAtMs) / 1000)} s in all, ${o.senders} senders`,
    `  events accepted ${m.acceptedEvents} (producer answers ${JSON.stringify(run.producerAnswers)}), redeliveries ${m.redeliveries} (answers ${JSON.stringify(run.redeliveryAnswers ?? {})}), deliveries ${m.deliveries} ${JSON.stringify(m.statuses)}, attempts ${m.attempts}, requests at receivers ${m.requests}`,
    `  faults: ${Object.entries(run.faultsByKind).map(([k, n]) => `${k} ×${n}`).join(', ') || 'none'}${run.faultErrors.length > 0 ? `; failed to inject: ${run.faultErrors.join('; ')}` : ''}`,
    `  peaks in flight per endpoint: ${Object.entries(m.endpointPeaks).map(([k, p]) => `${k} ${p.peak}/${p.limit}`).join(', ')}`,
    `  peaks in flight per org: ${Object.entries(m.orgPeaks).map(([k, p]) => `${k} ${p.peak}/${p.limit}`).join(', ')}`,
    `  rate (most in any 1 s, limit perSecond+burst, slack ${RATE_SLACK}): ${Object.entries(m.ratePeaks).map(([k, p]) => `${k} arrivals ${p.arrivals} starts ${p.starts} / ${p.limit}`).join(', ') || 'no rate-limited endpoint'}`,
    `  receivers' own stalls (event loop held up > 30 ms): ${(run.records.receiverStalls ?? []).length}, longest ${Math.max(0, ...(run.records.receiverStalls ?? []).map(([a, b]) => b - a))} ms`,
    `  duplicates (2xx twice): ${m.duplicates.total} (${m.duplicates.excused} across a fault that left the outcome unrecorded ${JSON.stringify(m.duplicates.excusedBy)}, ${m.duplicates.unexcused} not); repeated attempt numbers ${m.repeatedAttemptNumbers}`,
    `  resume after SIGKILL (endpoints with waiting deliveries): max ${m.maxResumeMs === null ? 'n/a' : m.maxResumeMs === 'never' ? 'never resumed' : `${m.maxResumeMs} ms`} (limit ${SOAK_MAX_RESUME_MS} ms); ${m.resume
      .filter((r) => r.hadWaitingDeliveries)
      .map((r) => `${r.endpointKey} ${r.resumeMs ?? '∞'}`)
      .join(', ') || 'none measured'}`,
    `  deliveries a SIGKILLed sender had in flight, kill → next request: ${m.stalledDeliveries.map((d) => `${d.deliveryId} (${d.endpointKey}) ${d.resumeMs ?? '∞'} ms`).join(', ') || 'none'}`,
    `  adaptive: longest acceptance → first attempt ${JSON.stringify(m.adaptiveMaxFirstAttemptDelayMs)}; lowest pace ${JSON.stringify(m.lowestPace)} after at most ${JSON.stringify(m.allowedCuts)} cuts; starts inside a pause a Redis fault delayed storing ${JSON.stringify(m.pausesStoredLate)}; at the end ${JSON.stringify(run.paces)}`,
  ];
  const kinds = VIOLATION_KINDS.filter((k) => result.byKind[k]);
  if (kinds.length === 0) lines.push(`  violations: none (schedule tolerance ${SCHEDULE_TOLERANCE_MS} ms)`);
  else {
    lines.push(`  violations: ${result.violations.length} (schedule tolerance ${SCHEDULE_TOLERANCE_MS} ms)`);
    for (const k of kinds) {
      const entry = result.byKind[k]!;
      const example = result.violations.find((v) => v.kind === k)!;
      lines.push(`    ${k}: ${entry.count} — ${entry.ids.slice(0, IDS_PER_KIND).join(', ')}`);
      lines.push(`      e.g. ${example.id}: ${example.detail.slice(0, 400)}`);
    }
  }
  lines.push(`  replay: SOAK_SEED=${o.seed} SOAK_SECONDS=${o.seconds} SOAK_SENDERS=${o.senders} SOAK_TARGET=${o.target} npm run soak`);
  return lines;
}

/** Evidence for up to 200 violating deliveries: what the receiver saw and what the delivery log says. */
function evidence(run: SoakRun): Record<string, unknown> {
  const ids = [...new Set(run.result.violations.flatMap((v) => [v.id, ...(v.detail.match(/dlv_[0-9A-Z]+/g) ?? [])]).filter((id) => id.startsWith('dlv_')))].slice(0, 200);
  const iso = (ms: number) => new Date(ms).toISOString();
  const out: Record<string, unknown> = {};
  for (const id of ids) {
    const d = run.records.deliveries.get(id);
    out[id] = {
      endpoint: d?.endpointKey ?? run.records.receiver.find((r) => r.deliveryId === id)?.endpointKey ?? null,
      receiver: run.records.receiver.filter((r) => r.deliveryId === id).sort((a, b) => a.arrivalMs - b.arrivalMs).map((r) => ({ attempt: r.attempt, arrival: iso(r.arrivalMs), answered: iso(r.answerMs), answer: r.answer, sequence: r.sequence, orderingKey: r.orderingKey })),
      log: d ? { status: d.status, lastError: d.lastError, cancelReason: d.cancelReason, attempts: d.attempts.map((a) => ({ number: a.number, started: iso(a.startedAtMs), finished: iso(a.finishedAtMs), status: a.responseStatus, error: a.error })) } : null,
    };
  }
  return out;
}

/** Writes `.data/soak-report-<target>.json` under `repoRoot`: options, metrics, faults, every violation. Returns its path. */
export function writeReport(repoRoot: string, run: SoakRun): string {
  const dir = path.join(repoRoot, '.data');
  mkdirSync(dir, { recursive: true });
  // Everything the checker read, so a run can be checked again (`npm run soak -- --check=<file>`).
  writeFileSync(path.join(dir, `soak-records-${run.options.target}.json`), JSON.stringify({ ...run.records, deliveries: [...run.records.deliveries.values()] }));
  const file = path.join(dir, `soak-report-${run.options.target}.json`);
  const report = {
    options: run.options,
    startedAt: new Date(run.startedAtMs).toISOString(),
    endedAt: new Date(run.endedAtMs).toISOString(),
    drained: run.drained,
    drainMs: run.drainMs,
    drainLeftovers: run.drainLeftovers,
    producerAnswers: run.producerAnswers,
    redeliveryAnswers: run.redeliveryAnswers,
    faults: run.records.faults.map((f) => ({ ...f, at: new Date(f.atMs).toISOString() })),
    faultsByKind: run.faultsByKind,
    faultErrors: run.faultErrors,
    metrics: run.result.metrics,
    paces: run.paces,
    violationsByKind: run.result.byKind,
    violations: run.result.violations,
    evidence: evidence(run),
    // Adaptive endpoints: the pace timeline and the slow-down answers, compact ([ms since start, …]).
    pacing: Object.fromEntries(run.records.endpoints.filter((e) => e.pacing === 'adaptive').map((e) => [e.key, {
      samples: run.records.paceSamples.filter((p) => p.endpointKey === e.key).map((p) => [p.atMs - run.startedAtMs, p.perSecond, p.concurrency]),
      slowDowns: run.records.receiver.filter((r) => r.endpointKey === e.key && (r.answer === 429 || r.answer === 503 || r.answer === 'closed-by-client')).map((r) => [r.answerMs - run.startedAtMs, r.answer, r.retryAfterS, r.arrivalMs - run.startedAtMs]),
    }])),
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}

/** Reads the records {@link writeReport} kept of a run (`.data/soak-records-<target>.json`), to check them again. */
export function readRecords(file: string): SoakRecords {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Omit<SoakRecords, 'deliveries'> & { deliveries: DeliveryLog[] };
  return { ...raw, deliveries: new Map(raw.deliveries.map((d) => [d.id, d])) };
}
