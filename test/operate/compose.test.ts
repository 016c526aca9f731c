import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { APP_NODE_FLAGS } from '../../scripts/node-flags.mjs';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * Issue 6 docker-compose.yml: Redis with AOF and noeviction, ingest, sender and Prometheus
 * scraping both, each with a health check. Docker is not needed: the files are read as YAML.
 */

const compose = parse(readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as any;
const services = compose.services as Record<string, any>;

/** `KEY: value` environment of a service, as strings. */
const envOf = (service: any): Record<string, string> => Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, String(v)]));
const healthcheckOf = (service: any): string => (service.healthcheck?.test ?? []).join(' ');

test('it runs redis, ingest, sender, prometheus and grafana, each with a health check', () => {
  expect(Object.keys(services).sort()).toEqual(['grafana', 'ingest', 'prometheus', 'redis', 'sender']);
  for (const [name, service] of Object.entries(services)) expect({ name, healthcheck: healthcheckOf(service).length > 0 }).toEqual({ name, healthcheck: true });
});

test('redis keeps an AOF, never evicts, persists to a volume and is published on loopback only', () => {
  const redis = services.redis;
  const command = redis.command as string[];
  const flag = (name: string) => command[command.indexOf(name) + 1];
  expect(command[0]).toBe('redis-server');
  expect(flag('--appendonly')).toBe('yes');
  expect(['always', 'everysec']).toContain(flag('--appendfsync'));
  expect(flag('--maxmemory-policy')).toBe('noeviction');
  // Delivery, event and job hashes stay compact listpacks (README "Redis settings").
  expect(Number(flag('--hash-max-listpack-value'))).toBeGreaterThanOrEqual(256);
  expect(redis.volumes.some((v: string) => v.endsWith(':/data'))).toBe(true);
  expect(redis.ports).toEqual(['127.0.0.1:6379:6379']);
  expect(healthcheckOf(redis)).toContain('redis-cli ping');
});

test('ingest listens on 3000, waits for a healthy redis, and its health check asks /readyz', () => {
  const ingest = services.ingest;
  const env = envOf(ingest);
  expect(env.PORT).toBe('3000');
  expect(env.REDIS_URL).toBe('redis://redis:6379');
  expect(env.ADMIN_TOKEN).toMatch(/^\$\{ADMIN_TOKEN:\?/);
  expect(ingest.ports).toContain('3000:3000');
  expect(ingest.command).toEqual(['node', ...APP_NODE_FLAGS, 'apps/ingest/dist/main.js']);
  expect(ingest.depends_on.redis.condition).toBe('service_healthy');
  expect(healthcheckOf(ingest)).toContain('http://127.0.0.1:3000/readyz');
});

test('the sender serves health and metrics on SENDER_PORT 3001 inside the network', () => {
  const sender = services.sender;
  const env = envOf(sender);
  expect(env.SENDER_PORT).toBe('3001');
  expect(env.REDIS_URL).toBe('redis://redis:6379');
  expect(sender.expose.map(String)).toContain('3001');
  expect(sender.command).toEqual(['node', ...APP_NODE_FLAGS, 'apps/sender/dist/main.js']);
  expect(sender.depends_on.redis.condition).toBe('service_healthy');
  expect(healthcheckOf(sender)).toContain('http://127.0.0.1:3001/readyz');
  // Long enough for SHUTDOWN_GRACE_MS (30 s by default) to run out before a SIGKILL.
  expect(parseInt(sender.stop_grace_period, 10)).toBeGreaterThan(30);
});

test('both apps get the same SECRETS_KEY (required), key id and previous keys; ingest its PUBLIC_URL (required)', () => {
  for (const name of ['ingest', 'sender']) {
    const env = envOf(services[name]);
    expect(env.NODE_ENV).toBe('production');
    expect(env.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?/);
    expect(env.SECRETS_KEY_ID).toBe('${SECRETS_KEY_ID:-k1}');
    expect(env.SECRETS_KEY_PREVIOUS).toBe('${SECRETS_KEY_PREVIOUS:-}');
  }
  expect(envOf(services.ingest).PUBLIC_URL).toMatch(/^\$\{PUBLIC_URL:\?/);
});

test('prometheus scrapes /metrics of both apps on the ports they listen on', () => {
  const prometheus = services.prometheus;
  const mount = (prometheus.volumes as string[]).find((v) => v.includes('prometheus.yml'))!;
  const [hostPath, containerPath] = mount.split(':');
  expect(containerPath).toBe('/etc/prometheus/prometheus.yml');
  expect(prometheus.command.join(' ')).toContain(`--config.file=${containerPath}`);
  expect(prometheus.ports).toEqual(['127.0.0.1:9090:9090']);
  expect(healthcheckOf(prometheus)).toContain('/-/ready');

  const configPath = path.join(REPO_ROOT, hostPath!);
  expect(existsSync(configPath)).toBe(true);
  const config = parse(readFileSync(configPath, 'utf8')) as any;
  const jobs = Object.fromEntries((config.scrape_configs as any[]).map((j) => [j.job_name, j]));
  const target = (job: any) => ({ path: job.metrics_path ?? '/metrics', names: job.dns_sd_configs[0].names, port: job.dns_sd_configs[0].port });
  expect(target(jobs['postern-ingest'])).toEqual({ path: '/metrics', names: ['ingest'], port: Number(envOf(services.ingest).PORT) });
  expect(target(jobs['postern-sender'])).toEqual({ path: '/metrics', names: ['sender'], port: Number(envOf(services.sender).SENDER_PORT) });
});

test('the Dockerfile is multi-stage: it builds in one stage and runs compiled code on production dependencies in the last', () => {
  const dockerfile = readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  expect(stages.length).toBeGreaterThanOrEqual(2);
  expect(stages[0]).toMatch(/RUN npm ci\b/);
  expect(stages[0]).toMatch(/RUN npm run build/);
  const last = stages.at(-1)!;
  expect(last).toMatch(/RUN npm ci --omit=dev/);
  expect(last).not.toMatch(/tsx|src\/main\.ts|npm run build/);
  for (const pkg of ['packages/shared', 'packages/store', 'packages/telemetry', 'packages/sandbox', 'apps/ingest', 'apps/sender', 'apps/dashboard']) expect(last).toContain(`COPY --from=build /app/${pkg}/dist ${pkg}/dist`);
  expect(last).toContain('COPY apps/dashboard/public apps/dashboard/public');
  expect(last).toContain(`CMD ${JSON.stringify(['node', ...APP_NODE_FLAGS, 'apps/ingest/dist/main.js']).replace(/","/g, '", "')}`);
});
