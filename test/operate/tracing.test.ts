import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTracing, type Tracing } from '@postern/telemetry';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * OpenTelemetry tracing (issue 15, item 5), against a local OTLP/HTTP receiver: with the standard
 * `OTEL_*` variables set, ingest exports a span for the accepted event and the sender one per
 * attempt, all in one trace (the producer's, when its request carried a `traceparent`), carried
 * through the queue; attributes name ids, attempt numbers, statuses and error codes, never the
 * payload or a secret. Without the variables nothing starts.
 */

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: OtlpAttribute[];
  status?: { code?: number };
  service: string;
}

const PRODUCER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PRODUCER_SPAN_ID = '00f067aa0ba902b7';
const SECRET_MARKER = 'card-4242-do-not-trace';

let collector: TestReceiver;
let receiver: TestReceiver;
let ingestTracing: Tracing;
let senderTracing: Tracing;
let postern: TestPostern;

/** Every span the collector got, with its resource's `service.name`. */
function exportedSpans(): OtlpSpan[] {
  return collector.requests.flatMap((request) => {
    const body = JSON.parse(request.body) as { resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: Omit<OtlpSpan, 'service'>[] }[] }[] };
    return body.resourceSpans.flatMap((rs) => {
      const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      return rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ ...span, service })));
    });
  });
}

function attr(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.boolValue;
}

beforeAll(async () => {
  collector = await startReceiver(() => 200, '/v1/traces');
  // The endpoint fails its first attempt and takes the second.
  receiver = await startReceiver((_req, n) => (n === 1 ? 500 : 200));
  const env = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` };
  ingestTracing = (await startTracing({ serviceName: 'postern-ingest', serviceVersion: 'test', env }))!;
  senderTracing = (await startTracing({ serviceName: 'postern-sender', serviceVersion: 'test', env }))!;
  postern = await startPostern({ tracers: { ingest: ingestTracing.tracer, sender: senderTracing.tracer } });
});

afterAll(async () => {
  await postern?.close();
  await ingestTracing?.shutdown();
  await senderTracing?.shutdown();
  await receiver?.close();
  await collector?.close();
});

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Loads both apps and asks for tracing with `env`, in a child process whose module hooks report
 * every OpenTelemetry SDK, exporter or resources module it loads; returns those and what it printed.
 */
async function sdkModulesLoaded(env: Record<string, string>): Promise<{ loaded: string[]; stdout: string }> {
  const script = `await import('@postern/ingest'); await import('@postern/sender');
    const { startTracing } = await import('@postern/telemetry');
    const t = await startTracing({ serviceName: 'probe', serviceVersion: '0', env: ${JSON.stringify(env)} });
    console.log(t ? 'tracing on' : 'tracing off'); await t?.shutdown();`;
  const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--conditions=development', '--import', 'tsx', '--import', './test/support/module-log-hooks.mjs', '--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', MODULE_LOG_PATTERN: '@opentelemetry/(sdk-|exporter-|resources|otlp-)' },
    timeout: 60_000,
  });
  return { loaded: stderr.split('\n').filter((l) => l.startsWith('loaded ')), stdout: stdout.trim() };
}

test('off by default: with no OTEL_* variable both apps load no OpenTelemetry SDK or exporter', async () => {
  const off = await sdkModulesLoaded({});
  expect(off).toEqual({ loaded: [], stdout: 'tracing off' });
  // The probe can see them when they load.
  const on = await sdkModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
  expect(on.stdout).toBe('tracing on');
  for (const sdk of ['sdk-trace-node', 'exporter-trace-otlp-http']) expect(on.loaded.join('\n')).toContain(`@opentelemetry/${sdk}/`);
}, 120_000);

test('without OTEL_* nothing starts', async () => {
  expect(await startTracing({ serviceName: 'postern-ingest', serviceVersion: 'test', env: {} })).toBeNull();
  expect(await startTracing({ serviceName: 'postern-ingest', serviceVersion: 'test', env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_SDK_DISABLED: 'true' } })).toBeNull();
});

test('an event and its two attempts are one trace, continuing the producer’s, exported over OTLP/HTTP', async () => {
  const { apiKey } = await postern.createOrg('traced');
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const posted = await postern.api('POST', '/v1/events', {
    key: apiKey,
    body: { type: 'invoice.paid', data: { card: SECRET_MARKER } },
    headers: { traceparent: `00-${PRODUCER_TRACE_ID}-${PRODUCER_SPAN_ID}-01` },
  });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  await waitUntil('the delivery succeeded on its second attempt', async () => (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body.status === 'succeeded', 15_000);

  await waitUntil(
    'the collector got the accept span and both attempt spans',
    async () => {
      await ingestTracing.flush();
      await senderTracing.flush();
      const spans = exportedSpans();
      return spans.filter((s) => s.name === 'postern attempt').length >= 2 && spans.some((s) => s.name === 'postern event accepted');
    },
    15_000,
  );
  expect(collector.requests.every((r) => r.method === 'POST' && r.path === '/v1/traces' && /json/.test(String(r.headers['content-type'])))).toBe(true);

  const spans = exportedSpans();
  const accepted = spans.find((s) => s.name === 'postern event accepted')!;
  const attempts = spans.filter((s) => s.name === 'postern attempt').sort((a, b) => Number(attr(a, 'postern.attempt.number')) - Number(attr(b, 'postern.attempt.number')));
  expect(accepted.service).toBe('postern-ingest');
  expect({ traceId: accepted.traceId, parentSpanId: accepted.parentSpanId }).toEqual({ traceId: PRODUCER_TRACE_ID, parentSpanId: PRODUCER_SPAN_ID });
  expect({ event: attr(accepted, 'postern.event.id'), type: attr(accepted, 'postern.event.type'), deliveries: attr(accepted, 'postern.deliveries') }).toEqual({ event: posted.body.id, type: 'invoice.paid', deliveries: 1 });

  expect(attempts.map((s) => ({ service: s.service, traceId: s.traceId, parent: s.parentSpanId, endpoint: attr(s, 'postern.endpoint.id'), attempt: attr(s, 'postern.attempt.number'), status: attr(s, 'http.response.status_code'), error: attr(s, 'postern.error.code') ?? null }))).toEqual([
    { service: 'postern-sender', traceId: PRODUCER_TRACE_ID, parent: accepted.spanId, endpoint: endpoint.id, attempt: 1, status: 500, error: 'http_500' },
    { service: 'postern-sender', traceId: PRODUCER_TRACE_ID, parent: accepted.spanId, endpoint: endpoint.id, attempt: 2, status: 200, error: null },
  ]);
  // A failed attempt is an error span; a successful one is not.
  expect(attempts.map((s) => s.status?.code ?? 0)).toEqual([2, 0]);

  // Never the payload, the URL or a secret.
  const exported = collector.requests.map((r) => r.body).join('\n');
  for (const forbidden of [SECRET_MARKER, endpoint.secret as string, apiKey, receiver.url]) expect(exported).not.toContain(forbidden);
});

test('an event without a traceparent starts a trace of its own, and the attempts still join it', async () => {
  const { apiKey } = await postern.createOrg('traced-2');
  await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(1) });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: {} } });
  const eventId = posted.body.id as string;
  const spansOf = () => exportedSpans().filter((s) => attr(s, 'postern.event.id') === eventId);
  await waitUntil(
    'the accept span and the attempt span',
    async () => {
      await ingestTracing.flush();
      await senderTracing.flush();
      return spansOf().length >= 2;
    },
    15_000,
  );
  const [first, second] = spansOf();
  expect(first!.traceId).not.toBe(PRODUCER_TRACE_ID);
  expect(second!.traceId).toBe(first!.traceId);
});

test('a batch makes one accept span per event, each in the producer’s trace, each the parent of its event’s attempts', async () => {
  const { apiKey } = await postern.createOrg('traced-batch');
  await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const traceId = '5cf92f3577b34da6a3ce929d0e0e4737';
  const posted = await postern.api('POST', '/v1/events/batch', {
    key: apiKey,
    body: { events: [{ type: 'order.created', data: { n: 1 }, idempotencyKey: 'traced-1' }, { type: 'order.created', data: { n: 2 } }, { type: 'order.created', data: { n: 3 }, idempotencyKey: 'traced-1' }] },
    headers: { traceparent: `00-${traceId}-${PRODUCER_SPAN_ID}-01` },
  });
  expect(posted.body.results.map((r: { status: number }) => r.status)).toEqual([202, 202, 409]);
  const eventIds = posted.body.results.slice(0, 2).map((r: { id: string }) => r.id as string);
  const inTrace = () => exportedSpans().filter((s) => s.traceId === traceId);
  await waitUntil(
    'three accept spans and an attempt span per event',
    async () => {
      await ingestTracing.flush();
      await senderTracing.flush();
      return inTrace().filter((s) => s.name === 'postern event accepted').length === 3 && eventIds.every((id: string) => inTrace().some((s) => s.name === 'postern attempt' && attr(s, 'postern.event.id') === id));
    },
    15_000,
  );
  const accepts = inTrace().filter((s) => s.name === 'postern event accepted');
  expect(accepts.every((s) => s.parentSpanId === PRODUCER_SPAN_ID)).toBe(true);
  // The refused event's span is an error; the accepted ones name their event.
  expect(accepts.filter((s) => s.status?.code === 2)).toHaveLength(1);
  for (const id of eventIds) {
    const accept = accepts.find((s) => attr(s, 'postern.event.id') === id)!;
    const attempts = inTrace().filter((s) => s.name === 'postern attempt' && attr(s, 'postern.event.id') === id);
    expect(attempts.length).toBeGreaterThan(0);
    expect(attempts.every((s) => s.parentSpanId === accept.spanId)).toBe(true);
  }
});
