#!/usr/bin/env node
// The `postern` command. Built (dist/ present, as when installed from a registry): runs it. In the
// repository without a build: runs the TypeScript source through tsx, with the workspace's
// `development` condition so @postern/client and @postern/shared resolve to their sources too.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/main.js', import.meta.url);
if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  const source = fileURLToPath(new URL('../src/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', source, ...process.argv.slice(2)], { stdio: 'inherit' });
  // Passed on to the child, which also gets Ctrl-C and a hang-up from the terminal itself (same
  // process group): it must treat a repeat as one (postern listen does). Handled here, so this
  // wrapper outlives the child and exits with its code.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}
