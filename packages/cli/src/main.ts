import { createInterface } from 'node:readline/promises';
import { runCli } from './program.js';

/** The `postern` command's entry: runs with the process's arguments and environment, exits with the command's code. */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function ask(question: string): Promise<string | null> {
  if (!process.stdin.isTTY) return null;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

const code = await runCli(process.argv.slice(2), { env: process.env, readStdin, ask, now: () => Date.now() });
process.exitCode = code;
