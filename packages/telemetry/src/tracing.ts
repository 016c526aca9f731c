import { ROOT_CONTEXT, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { formatTraceparent, parseTraceparent } from './traceparent.js';

/** Where and how spans are exported, as the standard `OTEL_*` variables say. */
export interface TracingSettings {
  /** OTLP/HTTP traces URL, e.g. `http://collector:4318/v1/traces`. */
  url: string;
  /** `service.name` of the resource: `OTEL_SERVICE_NAME`, else the app's own name. */
  serviceName: string;
}

/** Default OTLP/HTTP endpoint of the OpenTelemetry specification, when only `OTEL_TRACES_EXPORTER=otlp` is set. */
export const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318';

/**
 * Decides from the environment whether tracing is on, and where spans go; null = off. Off unless
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is set or
 * `OTEL_TRACES_EXPORTER` is `otlp`; always off with `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. The traces endpoint is used as given; the general endpoint gets
 * `/v1/traces` appended (OTLP exporter specification).
 *
 * @throws Error naming the variable when `OTEL_TRACES_EXPORTER` names an exporter other than
 *   `otlp` or `none`, or `OTEL_EXPORTER_OTLP_*PROTOCOL` asks for gRPC (Postern exports OTLP over
 *   HTTP only)
 */
export function tracingSettings(env: Readonly<Record<string, string | undefined>>, defaultServiceName: string): TracingSettings | null {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((e) => e.trim().toLowerCase()).filter(Boolean);
  if (exporters.includes('none')) return null;
  const unsupported = exporters.find((e) => e !== 'otlp');
  if (unsupported) throw new Error(`OTEL_TRACES_EXPORTER: "${unsupported}" is not supported; use otlp (OTLP over HTTP) or none`);
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol.trim().toLowerCase() === 'grpc') {
    throw new Error('OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported; Postern exports OTLP over HTTP (http/json), port 4318 of a collector');
  }
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!tracesEndpoint && !endpoint && exporters.length === 0) return null;
  const url = tracesEndpoint || `${(endpoint || DEFAULT_OTLP_ENDPOINT).replace(/\/+$/, '')}/v1/traces`;
  if (!/^https?:\/\/[^\s]+$/.test(url)) throw new Error(`OTEL_EXPORTER_OTLP_ENDPOINT: "${url}" is not an http(s) URL`);
  return { url, serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName };
}

/** A running tracer provider of one app: its tracer, and how to flush and stop its exporter. */
export interface Tracing {
  /** Makes Postern's spans; they are exported in batches (OTLP/HTTP, JSON). */
  readonly tracer: Tracer;
  /** Where spans go. */
  readonly url: string;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Exports what is left and stops; call on shutdown. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing when the environment asks for it ({@link tracingSettings}), else resolves null
 * having loaded nothing: the SDK and the exporter are imported only here, on demand, so an app
 * without `OTEL_*` pays for none of it. The provider is not registered globally (Postern makes
 * its spans itself and passes the tracer in its deps), so two apps in one process (tests) keep
 * their own. `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_TRACES_SAMPLER` and
 * the batch settings (`OTEL_BSP_*`) are read from `process.env` by the SDK itself.
 *
 * @param options.serviceName - `service.name` unless `OTEL_SERVICE_NAME` says otherwise
 * @param options.serviceVersion - `service.version`
 * @param options.env - the environment to read (`main.ts`: `process.env`)
 * @throws Error as {@link tracingSettings}
 */
export async function startTracing(options: { serviceName: string; serviceVersion: string; env: Readonly<Record<string, string | undefined>> }): Promise<Tracing | null> {
  const settings = tracingSettings(options.env, options.serviceName);
  if (!settings) return null;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { detectResources, envDetector, resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const resource = resourceFromAttributes({ 'service.version': options.serviceVersion })
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ 'service.name': settings.serviceName }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }))] });
  return {
    tracer: provider.getTracer('postern', options.serviceVersion),
    url: settings.url,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The context to start a span in so that it continues the trace of `traceparent` (a remote
 * parent); the root context (a new trace) when it is absent or malformed.
 */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  const parent = parseTraceparent(traceparent);
  return parent ? trace.setSpanContext(ROOT_CONTEXT, { ...parent, isRemote: true }) : ROOT_CONTEXT;
}

/** The `traceparent` that makes later spans children of `span`. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return formatTraceparent({ traceId, spanId, traceFlags });
}
