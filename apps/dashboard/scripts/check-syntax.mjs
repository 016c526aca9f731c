// Lint for the browser code, which has no build step: every module under public/ must parse as
// an ES module (`node --check` with this package's "type": "module").
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../public', import.meta.url));
const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
for (const file of files) execFileSync(process.execPath, ['--check', join(root, file)], { stdio: 'inherit' });
console.log(`dashboard: ${files.length} modules parse`);
