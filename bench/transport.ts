/**
 * CPU per request of the sender's HTTP transport (`createGotTransport`), against the benchmark
 * receiver (bench/receiver.ts) in its own process on 127.0.0.1, so only the client's work is
 * counted.
 *
 *   node --import tsx bench/transport.ts [--runs 5] [--requests 4000] [--concurrency 50]
 *                                        [--measures whole-response|response-headers]
 *                                        [--baseline path/to/other/http-transport.ts]
 *
 * Each run is a fresh process (its own JIT and heap): it warms up, then sends `--requests` signed-
 * size POSTs at `--concurrency` and reports `process.cpuUsage()` (user + system) per request, in
 * microseconds, and requests per second. With `--baseline`, runs of the baseline module and of the
 * current one alternate, and the report gives medians and the ratio current / baseline; on a
 * shared machine compare those, not single runs.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { classifyAddress } from '@postern/shared';
import { REPO_ROOT, startReceiverProcess } from './bench-support.js';

const CURRENT = path.join(REPO_ROOT, 'apps/sender/src/http-transport.ts');
const CHILD_ENV = 'BENCH_TRANSPORT_MODULE';

type Measures = 'whole-response' | 'response-headers';

interface RunResult {
  cpuUsPerRequest: number;
  requestsPerS: number;
  failures: number;
}

function flag(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? (process.argv[at + 1] ?? fallback) : fallback;
}

/** One measurement in this process: the transport module named by `BENCH_TRANSPORT_MODULE`. */
async function measure(modulePath: string, url: string, requests: number, concurrency: number, measures: Measures): Promise<RunResult> {
  const mod = (await import(pathToFileURL(modulePath).href)) as typeof import('../apps/sender/src/http-transport.js');
  const allowList = ['127.0.0.1'];
  const transport = mod.createGotTransport({ allowList, classifyAddress: (a: string) => classifyAddress(a, allowList) });
  // An envelope of a typical size and the headers the sender sets.
  const body = JSON.stringify({ id: 'evt_2Q0', type: 'invoice.paid', timestamp: new Date().toISOString(), data: { invoice: 'in_42', amount: 1234, lines: Array(8).fill({ sku: 'abc', qty: 1 }) } });
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Postern/bench',
    'webhook-id': 'evt_2Q0',
    'webhook-timestamp': '1764550000',
    'webhook-signature': `v1,${'A'.repeat(44)}`,
    'webhook-attempt': '1',
    'webhook-delivery-id': 'dlv_2Q0',
    'webhook-request-id': 'dlv_2Q0.1',
  };
  let failures = 0;
  const send = async () => {
    const r = await transport.send({
      url,
      headers,
      body,
      timeout: { ms: 10_000, measures },
      redirects: { follow: false },
      maxResponseBytesRead: 1024,
    });
    if (r.kind !== 'response' || r.status !== 200) failures++;
  };
  const drive = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await send();
      }),
    );
  };
  await drive(Math.max(500, requests / 4));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await drive(requests);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  transport.close();
  return { cpuUsPerRequest: (cpu.user + cpu.system) / requests, requestsPerS: (requests / wallMs) * 1000, failures };
}

function runChild(modulePath: string, url: string, requests: number, concurrency: number, measures: Measures): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/transport.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, [CHILD_ENV]: JSON.stringify({ modulePath, url, requests, concurrency, measures }) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as RunResult) : reject(new Error(`bench child exited with ${code}`))));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

async function main(): Promise<void> {
  const child = process.env[CHILD_ENV];
  if (child) {
    const { modulePath, url, requests, concurrency, measures } = JSON.parse(child) as { modulePath: string; url: string; requests: number; concurrency: number; measures: Measures };
    process.stdout.write(JSON.stringify(await measure(modulePath, url, requests, concurrency, measures)));
    return;
  }
  const runs = Number(flag('runs', '5'));
  const requests = Number(flag('requests', '4000'));
  const concurrency = Number(flag('concurrency', '50'));
  const measures = flag('measures', 'whole-response') as Measures;
  const baseline = process.argv.includes('--baseline') ? path.resolve(flag('baseline', '')) : null;
  const variants: [string, string][] = baseline ? [['baseline', baseline], ['current', CURRENT]] : [['current', CURRENT]];
  const receiver = await startReceiverProcess();
  const results = new Map<string, RunResult[]>(variants.map(([name]) => [name, []]));
  try {
    for (let run = 1; run <= runs; run++) {
      for (const [name, modulePath] of variants) {
        const r = await runChild(modulePath, `${receiver.base}/ok`, requests, concurrency, measures);
        results.get(name)!.push(r);
        console.log(`run ${run} ${name.padEnd(8)} ${r.cpuUsPerRequest.toFixed(1)} µs CPU/request, ${r.requestsPerS.toFixed(0)} requests/s${r.failures ? `, ${r.failures} failed` : ''}`);
      }
    }
  } finally {
    await receiver.stop();
  }
  const summary = Object.fromEntries(
    [...results].map(([name, rs]) => [name, { cpuUsPerRequest: median(rs.map((r) => r.cpuUsPerRequest)), requestsPerS: median(rs.map((r) => r.requestsPerS)) }]),
  );
  console.log(`medians of ${runs} runs, ${requests} requests at concurrency ${concurrency}, timeout measures ${measures}:`);
  for (const [name, m] of Object.entries(summary)) console.log(`  ${name.padEnd(8)} ${m.cpuUsPerRequest.toFixed(1)} µs CPU/request, ${m.requestsPerS.toFixed(0)} requests/s`);
  if (summary.baseline && summary.current) {
    console.log(`  ratio current/baseline: CPU per request ${(summary.current.cpuUsPerRequest / summary.baseline.cpuUsPerRequest).toFixed(2)}, throughput ${(summary.current.requestsPerS / summary.baseline.requestsPerS).toFixed(2)}`);
  }
}

await main();
