/**
 * What an endpoint's request settings (README "Request settings") cost per delivery, measured by
 * `npm run bench` in the same run as the plain 1-endpoint full-speed run:
 *
 * - `bearerHeaders`: the same endpoint set-up with `auth: {type: "bearer"}` and three static
 *   headers, one of them `secret: true` (so every attempt reads request secrets and builds the
 *   extra headers);
 * - `proxy`: the plain endpoint with its `proxy` set to a forward proxy on loopback
 *   (bench/forward-proxy.ts, CONNECT tunnels; its CPU is reported apart, never charged to Postern).
 *
 * Each is compared with the plain run as a ratio of CPU ms per delivery (ingest + sender + Redis),
 * against the target of {@link CPU_RATIO_TARGET}.
 */
import type { CreateEndpointBody } from '@postern/client';
import type { DeliveryCost } from './resource-cost.js';
import type { EndToEnd } from './scenarios.js';

/** The most CPU per delivery a run with request settings may cost, as a multiple of the plain run's. */
export const CPU_RATIO_TARGET = 1.15;

/** Static headers and bearer auth: what the `bearerHeaders` run's endpoint is created with. */
export const BEARER_HEADERS_SETTINGS: Pick<CreateEndpointBody, 'headers' | 'auth'> = {
  auth: { type: 'bearer', token: 'bench-bearer-token-0123456789abcdef' },
  headers: [
    { name: 'X-Tenant', value: 'acme' },
    { name: 'X-Request-Source', value: 'postern-bench' },
    { name: 'X-Api-Key', value: 'k_bench_0123456789abcdef', secret: true },
  ],
};

/** One request-settings run as bench.json keeps it. */
export interface RequestSettingsRun {
  deliveriesPerSecond: number;
  deliveries: number;
  /** Postern's processes, as in `costs` (total = ingest + sender + Redis). */
  cpuMsPerDelivery: DeliveryCost['cpuMsPerDelivery'];
  /** The forward proxy's own CPU ms per delivery (the `proxy` run only; not in `total`). */
  proxyCpuMsPerDelivery?: number | null;
  redisCommandsPerDelivery: number;
  /** Requests that reached the receiver with an `authorization` header (the `bearerHeaders` run: all of them). */
  withAuthorization: number;
}

/** `requestSettings` in bench.json: both runs, the plain run's CPU, and the ratios to it. */
export interface RequestSettingsCost {
  bearerHeaders: RequestSettingsRun;
  proxy: RequestSettingsRun;
  /** The plain 1-endpoint full-speed run of the same bench run (`costs.oneEndpoint`). */
  plainCpuMsPerDelivery: DeliveryCost['cpuMsPerDelivery'];
  plainDeliveriesPerSecond: number;
  plainRedisCommandsPerDelivery: number;
  /** CPU ms per delivery ÷ the plain run's, by process and in total (null when a process could not be read). */
  ratios: Record<'bearerHeaders' | 'proxy', Record<'ingest' | 'sender' | 'redis' | 'total', number | null>>;
  target: { ratio: number; bearerHeadersMet: boolean; proxyMet: boolean };
}

const r2 = (n: number) => Math.round(n * 100) / 100;

function ratiosTo(plain: DeliveryCost['cpuMsPerDelivery'], run: DeliveryCost['cpuMsPerDelivery']): Record<'ingest' | 'sender' | 'redis' | 'total', number | null> {
  const ratio = (k: 'ingest' | 'sender' | 'redis' | 'total') => {
    const a = run[k];
    const b = plain[k];
    return a === null || b === null || b === 0 ? null : r2(a / b);
  };
  return { ingest: ratio('ingest'), sender: ratio('sender'), redis: ratio('redis'), total: ratio('total') };
}

function runOf(r: MeasuredRun, proxyCpu?: number | null): RequestSettingsRun {
  return {
    deliveriesPerSecond: Math.round(r.deliveriesPerSecond),
    deliveries: r.deliveries,
    cpuMsPerDelivery: r.cost.cpuMsPerDelivery,
    ...(proxyCpu !== undefined ? { proxyCpuMsPerDelivery: proxyCpu } : {}),
    redisCommandsPerDelivery: r.cost.redisCommandsPerDelivery,
    withAuthorization: r.withAuthorization,
  };
}

/** Puts the two runs beside the plain one: `proxyName` is the proxy's name among the window's other processes. */
export function requestSettingsCost(plain: EndToEnd & { cost: DeliveryCost }, bearerHeaders: MeasuredRun, proxy: MeasuredRun, proxyName: string): RequestSettingsCost {
  const plainCpu = plain.cost.cpuMsPerDelivery;
  const ratios = { bearerHeaders: ratiosTo(plainCpu, bearerHeaders.cost.cpuMsPerDelivery), proxy: ratiosTo(plainCpu, proxy.cost.cpuMsPerDelivery) };
  const met = (r: number | null) => r !== null && r <= CPU_RATIO_TARGET;
  return {
    bearerHeaders: runOf(bearerHeaders),
    proxy: runOf(proxy, proxy.cost.otherCpuMsPerDelivery[proxyName] ?? null),
    plainCpuMsPerDelivery: plainCpu,
    plainDeliveriesPerSecond: Math.round(plain.deliveriesPerSecond),
    plainRedisCommandsPerDelivery: plain.cost.redisCommandsPerDelivery,
    ratios,
    target: { ratio: CPU_RATIO_TARGET, bearerHeadersMet: met(ratios.bearerHeaders.total), proxyMet: met(ratios.proxy.total) },
  };
}

/** One measured run as {@link measureRequestSettings} is given it. */
export type MeasuredRun = EndToEnd & { cost: DeliveryCost; withAuthorization: number };

/**
 * Runs both request-settings runs through `measure` (which creates a 1-endpoint org with the given
 * request settings, warms it up and measures it as the plain run was) and compares them with
 * `plain`. Throws when the bearer run's requests did not all carry `authorization`, or when the
 * proxy spent no CPU (the requests did not go through it).
 */
export async function measureRequestSettings(opts: {
  plain: EndToEnd & { cost: DeliveryCost };
  /** The forward proxy's URL, and its name among the cost window's other processes. */
  proxy: { url: string; name: string };
  measure: (request: Pick<CreateEndpointBody, 'headers' | 'auth' | 'proxy'>) => Promise<MeasuredRun>;
  log: (line: string) => void;
}): Promise<RequestSettingsCost> {
  const { log } = opts;
  const bearerHeaders = await opts.measure(BEARER_HEADERS_SETTINGS);
  if (bearerHeaders.withAuthorization < bearerHeaders.deliveries) throw new Error(`bearer run: ${bearerHeaders.deliveries - bearerHeaders.withAuthorization} requests arrived without authorization`);
  log(`    bearer + 3 headers: ${Math.round(bearerHeaders.deliveriesPerSecond)} deliveries/s, ${bearerHeaders.cost.cpuMsPerDelivery.total} CPU ms and ${bearerHeaders.cost.redisCommandsPerDelivery} Redis commands per delivery`);
  const proxied = await opts.measure({ proxy: opts.proxy.url });
  const proxyCpu = proxied.cost.otherCpuMsPerDelivery[opts.proxy.name] ?? null;
  // An idle proxy reads 0.00x ms per delivery: one that carried the requests spends ten times that.
  if (proxyCpu === null || proxyCpu < 0.01) throw new Error(`proxy run: the forward proxy used ${proxyCpu} CPU ms per delivery; were the requests proxied?`);
  log(`    through a forward proxy: ${Math.round(proxied.deliveriesPerSecond)} deliveries/s, ${proxied.cost.cpuMsPerDelivery.total} CPU ms (the proxy's own ${proxyCpu}) and ${proxied.cost.redisCommandsPerDelivery} Redis commands per delivery`);
  const cost = requestSettingsCost(opts.plain, bearerHeaders, proxied, opts.proxy.name);
  log(`    CPU per delivery ÷ plain: bearer + headers ${cost.ratios.bearerHeaders.total}, proxy ${cost.ratios.proxy.total} (target ≤ ${CPU_RATIO_TARGET})`);
  return cost;
}

/** The printed table: one row per run, the plain one first. */
export function requestSettingsRows(c: RequestSettingsCost): Record<string, string | number | null>[] {
  const row = (name: string, dps: number, cpu: DeliveryCost['cpuMsPerDelivery'], commands: number | null, ratio: number | null, proxyCpu: number | null | undefined) => ({
    run: name,
    'deliveries/s': dps,
    'ingest CPU ms': cpu.ingest,
    'sender CPU ms': cpu.sender,
    'redis CPU ms': cpu.redis,
    'total CPU ms': cpu.total,
    '× plain (total)': ratio,
    '(proxy CPU ms)': proxyCpu ?? '—',
    'redis commands': commands,
  });
  return [
    row('plain 1 endpoint', c.plainDeliveriesPerSecond, c.plainCpuMsPerDelivery, c.plainRedisCommandsPerDelivery, 1, undefined),
    row('bearer + 3 headers (1 secret)', c.bearerHeaders.deliveriesPerSecond, c.bearerHeaders.cpuMsPerDelivery, c.bearerHeaders.redisCommandsPerDelivery, c.ratios.bearerHeaders.total, undefined),
    row('through a forward proxy', c.proxy.deliveriesPerSecond, c.proxy.cpuMsPerDelivery, c.proxy.redisCommandsPerDelivery, c.ratios.proxy.total, c.proxy.proxyCpuMsPerDelivery),
  ];
}
