import { readFileSync } from 'node:fs';
import { ERROR_CODES, PRESETS, PRESET_NAMES } from '@postern/shared';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function errorCodeRows(): string[][] {
  const start = readme.indexOf('<!-- error-codes:start -->');
  const end = readme.indexOf('<!-- error-codes:end -->');
  expect(start).toBeGreaterThan(-1);
  expect(end).toBeGreaterThan(start);
  return readme
    .slice(start, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
}

test("README's error-code table lists exactly the codes of the shared table, with the same rules", () => {
  const rows = errorCodeRows();
  expect(rows.map((r) => r[0]!.replace(/`/g, ''))).toEqual(ERROR_CODES.map((c) => c.code));
  for (const [i, info] of ERROR_CODES.entries()) {
    const [, meaning, retried, counts] = rows[i]!;
    expect({ code: info.code, meaning, retried, counts }).toEqual({ code: info.code, meaning: info.meaning, retried: info.retried, counts: info.countsAgainstEndpoint });
  }
});

test("README's preset table names every preset and its attempt count", () => {
  const header = readme.split('\n').find((l) => l.startsWith('| | `standard`'));
  expect(header).toBeDefined();
  for (const name of PRESET_NAMES) expect(header).toContain(`\`${name}\``);
  const attemptsRow = readme.split('\n').find((l) => l.startsWith('| attempts |'))!;
  const cells = attemptsRow.split('|').slice(2, -1).map((c) => Number(c.trim()));
  expect(cells).toEqual(PRESET_NAMES.map((n) => PRESETS[n].policy.maxAttempts));
});
