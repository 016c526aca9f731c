import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, PRESETS, PRESET_NAMES } from '@postern/shared';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const apiDoc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
const policiesDoc = readFileSync(new URL('../../docs/policies.md', import.meta.url), 'utf8');

function errorCodeRows(): string[][] {
  const start = apiDoc.indexOf('<!-- error-codes:start -->');
  const end = apiDoc.indexOf('<!-- error-codes:end -->');
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return apiDoc
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
}

test("docs/api.md's error-code table lists exactly the codes of the shared table, with the same rules", () => {
  const rows = errorCodeRows();
  expect(rows.map((r) => r[0]!.replace(/`/g, ''))).toEqual(ERROR_CODES.map((c) => c.code));
  for (const [i, info] of ERROR_CODES.entries()) {
    const [, meaning, retried, counts] = rows[i]!;
    expect({ code: info.code, meaning, retried, counts }).toEqual({ code: info.code, meaning: info.meaning, retried: info.retried, counts: info.countsAgainstEndpoint });
  }
});

test("docs/policies.md's preset table names every preset and its attempt count", () => {
  const header = policiesDoc.split('\n').find((l) => l.startsWith('| | `standard`'));
  expect(header).toBeDefined();
  for (const name of PRESET_NAMES) expect(header).toContain(`\`${name}\``);
  const attemptsRow = policiesDoc.split('\n').find((l) => l.startsWith('| attempts |'))!;
  const cells = attemptsRow.split('|').slice(2, -1).map((c) => Number(c.trim()));
  expect(cells).toEqual(PRESET_NAMES.map((n) => PRESETS[n].policy.maxAttempts));
});

/** The numbered walkthrough step that starts with `n.`, up to the next step or section. */
function walkthroughStep(n: number): string {
  const start = readme.indexOf('## Walkthrough with curl');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 5));
  const from = section.indexOf(`\n${n}. `);
  expect(from).toBeGreaterThan(-1);
  const next = section.indexOf(`\n${n + 1}. `, from);
  return section.slice(from, next === -1 ? undefined : next);
}

test('the walkthrough shows a retry in seconds: step 5 sets a fixed schedule of seconds before stopping the receiver', () => {
  const step = walkthroughStep(5);
  const body = /-d '(\{"policy":.*\})'/.exec(step)?.[1];
  expect(body).toBeDefined();
  const policy = JSON.parse(body!).policy as { schedule: { kind: string; waitsMs: number[] } };
  expect(policy.schedule.kind).toBe('fixed');
  expect(Math.max(...policy.schedule.waitsMs)).toBeLessThanOrEqual(10_000);
  expect(step.indexOf('PATCH')).toBeLessThan(step.indexOf('Stop the receiver'));
});

test('the walkthrough points at the dashboard', () => {
  expect(walkthroughStep(6)).toContain('http://localhost:3000/dashboard/');
});

test('code cites docs/architecture.md and preset names, never DESIGN.md or the seed documents', () => {
  const architecture = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
  for (const section of ['## Parts', '## Data flow', '## Key layout', '## Guarantees, and why they hold', '## Policies and presets', '## Error codes', '## Data loss']) {
    expect(architecture).toContain(section);
  }
  const root = new URL('../../', import.meta.url).pathname;
  // Files being rewritten elsewhere keep their comments until then.
  const pending = ['apps/sender/src/deliver.ts', 'apps/sender/src/sender.ts', 'apps/sender/src/concurrency-gate.ts', 'apps/sender/src/http-transport.ts', 'apps/ingest/src/accept-event.ts', 'apps/ingest/src/auth.ts', 'packages/store/src/delivery-repository.ts', 'packages/store/src/lease-repository.ts', 'packages/store/src/delivery-queue.ts'];
  let hits = '';
  try {
    hits = execFileSync('git', ['grep', '-n', '-I', '-E', 'DESIGN\\.md|[Ss]eeds? 00[0-4]', '--', 'apps', 'packages', 'test', 'scripts', 'docker-compose.yml', ':!*.lua', ...pending.map((p) => `:!${p}`)], { cwd: root, encoding: 'utf8' });
  } catch {
    // git grep exits 1 when nothing matches
  }
  expect(hits.split('\n').filter(Boolean).filter((l) => !l.startsWith('test/docs/readme.test.ts'))).toEqual([]);
});
