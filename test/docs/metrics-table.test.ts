import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createSenderMetrics } from '@postern/sender';
import { createIngestMetrics } from '@postern/ingest';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * docs/operations.md's metrics table names each metric's labels as /metrics exposes them
 * (`org_id`, `endpoint_id`, `endpoint`…): checked against the registries the apps build.
 */

/** The table's rows: metric → its label names (the backquoted words of the labels cell, outside parentheses). */
function documentedLabels(): Map<string, string[]> {
  const text = readFileSync(join(REPO_ROOT, 'docs/operations.md'), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const cells = /^\| `(postern_[a-z_]+)` \| [a-z, ]+ \| [a-z]+ \| ([^|]*) \|/.exec(line);
    if (!cells) continue;
    const labels = cells[2]!.replace(/\([^)]*\)/g, '');
    rows.set(cells[1]!, [...labels.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
  }
  return rows;
}

test('every metric the sender and ingest register is in docs/operations.md with its exact label names', () => {
  const registry = new Registry();
  createSenderMetrics({ registry, queues: [] });
  const ingest = new Registry();
  createIngestMetrics(ingest);
  const documented = documentedLabels();
  const exposed = [...registry.getMetricsAsArray(), ...ingest.getMetricsAsArray()].map((m) => ({ name: m.name, labels: [...((m as unknown as { labelNames?: string[] }).labelNames ?? [])] }));
  expect(exposed.length).toBeGreaterThan(15);
  for (const { name, labels } of exposed) expect([name, documented.get(name)]).toEqual([name, labels]);
});
