import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { connectRedis } from '@postern/store';
import { deleteByPrefix, TEST_ADMIN_TOKEN, TEST_REDIS_URL } from '../support/postern.js';
import { REPO_ROOT, spawnApp, type SpawnedApp } from '../support/spawn-app.js';

/**
 * The Grafana dashboard (issue 15, item 6): deploy/grafana/dashboards/postern.json, provisioned by
 * docker-compose.yml beside Prometheus. Every metric its PromQL queries is one the apps really
 * expose: both apps run as `main.ts` runs them and their `/metrics` is read. Docker is not needed.
 */

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const dashboard = JSON.parse(read('deploy/grafana/dashboards/postern.json')) as { uid: string; panels: Panel[] };
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, any>; volumes: Record<string, unknown> };
const datasources = parse(read('deploy/grafana/provisioning/datasources/prometheus.yml')) as { datasources: { uid: string; type: string; url: string }[] };
const providers = parse(read('deploy/grafana/provisioning/dashboards/postern.yml')) as { providers: { options: { path: string } }[] };

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

const queryPanels = dashboard.panels.filter((p) => p.type !== 'row');
const expressions = queryPanels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: what is left once strings, label matchers, range
 * and subquery brackets, grouping clauses and function or aggregation calls are taken out.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const after = bare.slice(m.index + m[0].length).trimStart();
    if (after.startsWith('(') || PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

test('the PromQL reader finds the metrics of an expression, and only them', () => {
  expect(metricNames('histogram_quantile(0.99, sum by (le, result) (rate(postern_attempt_duration_seconds_bucket{result="x", route=~"/v1/(a|b)"}[$__rate_interval])))')).toEqual(['postern_attempt_duration_seconds_bucket']);
  expect(metricNames('sum(rate(a_total{outcome="succeeded"}[5m])) / sum without (x) (rate(b_total[5m])) > bool 0')).toEqual(['a_total', 'b_total']);
  expect(metricNames('topk(10, sum by (org_id, endpoint_id) (postern_endpoint_recent_failed_attempts))')).toEqual(['postern_endpoint_recent_failed_attempts']);
});

test('every panel queries the provisioned Prometheus, and has at least one query naming a metric', () => {
  const [prometheus] = datasources.datasources;
  expect(prometheus).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
  expect(queryPanels.length).toBeGreaterThanOrEqual(10);
  for (const panel of queryPanels) {
    expect({ panel: panel.title, uid: panel.datasource?.uid }).toEqual({ panel: panel.title, uid: prometheus!.uid });
    expect({ panel: panel.title, queries: (panel.targets ?? []).length > 0 }).toEqual({ panel: panel.title, queries: true });
    for (const target of panel.targets ?? []) {
      expect({ panel: panel.title, uid: target.datasource?.uid }).toEqual({ panel: panel.title, uid: prometheus!.uid });
      expect({ panel: panel.title, expr: target.expr, metrics: metricNames(target.expr).length > 0 }).toEqual({ panel: panel.title, expr: target.expr, metrics: true });
      // Balanced brackets: a typo Grafana would only show as an error on the panel.
      for (const [open, close] of [['(', ')'], ['{', '}'], ['[', ']']] as const) {
        expect({ expr: target.expr, bracket: open, opened: target.expr.split(open).length }).toEqual({ expr: target.expr, bracket: open, opened: target.expr.split(close).length });
      }
    }
  }
});

test('it covers what README promises: rate and outcome by error code, first-attempt latency, queue depth and oldest pending, breaker trips, top failing endpoints', () => {
  const queried = new Set(expressions.flatMap((e) => metricNames(e.expr)));
  for (const metric of [
    'postern_deliveries_finished_total',
    'postern_attempts_total',
    'postern_first_attempt_latency_seconds_bucket',
    'postern_queue_jobs',
    'postern_queue_oldest_pending_seconds',
    'postern_breaker_trips_total',
    'postern_endpoint_recent_failed_attempts',
  ]) {
    expect(queried).toContain(metric);
  }
  expect(expressions.some((e) => /sum by \(error\)/.test(e.expr) && e.expr.includes('postern_attempts_total'))).toBe(true);
});

test('docker-compose provisions Grafana beside Prometheus, with this dashboard and data source', () => {
  const grafana = compose.services.grafana;
  expect(grafana.image).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
  const volumes = grafana.volumes as string[];
  expect(volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
  const dashboardsMount = volumes.find((v) => v.startsWith('./deploy/grafana/dashboards:'))!;
  expect(dashboardsMount.split(':')[1]).toBe(providers.providers[0]!.options.path);
  expect(grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(`${providers.providers[0]!.options.path}/postern.json`);
  expect(grafana.ports).toEqual(['127.0.0.1:3002:3000']);
  expect(Object.keys(grafana.depends_on)).toContain('prometheus');
  expect(Object.keys(compose.volumes)).toContain('grafana-data');
  // The data source's host is the Prometheus service of the same compose file.
  expect(compose.services.prometheus).toBeDefined();
});

describe('against the running apps', () => {
  const prefix = `test:${randomBytes(6).toString('hex')}`;
  const apps: SpawnedApp[] = [];

  afterAll(async () => {
    for (const app of apps) await app.stop();
    const redis = connectRedis({ url: TEST_REDIS_URL }, 'worker');
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  /** The metric names a `/metrics` page declares (`# TYPE name type`), with the series names a histogram adds. */
  function exposed(text: string): Set<string> {
    const names = new Set<string>();
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const [, name, type] = m as unknown as [string, string, string];
      names.add(name);
      if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
    }
    return names;
  }

  test('every metric the dashboard queries is on the /metrics of ingest or the sender', async () => {
    const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN: TEST_ADMIN_TOKEN, LOG_LEVEL: 'info' };
    const ingest = spawnApp('ingest', { ...env, PORT: '0', HOST: '127.0.0.1' });
    apps.push(ingest);
    const sender = spawnApp('sender', { ...env, SENDER_PORT: '0', SENDER_HOST: '127.0.0.1' });
    apps.push(sender);
    const pages = await Promise.all([ingest, sender].map(async (app) => (await fetch(`http://127.0.0.1:${await app.port(60_000)}/metrics`)).text()));
    const available = new Set(pages.flatMap((page) => [...exposed(page)]));
    const missing = expressions.flatMap(({ panel, expr }) => metricNames(expr).filter((name) => !available.has(name)).map((name) => `${panel}: ${name}`));
    expect(missing).toEqual([]);
  }, 90_000);
});
