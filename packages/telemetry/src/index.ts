export { DEFAULT_OTLP_ENDPOINT, contextFromTraceparent, startTracing, traceparentOf, tracingSettings, type Tracing, type TracingSettings } from './tracing.js';
export { formatTraceparent, parseTraceparent, type TraceParent } from './traceparent.js';
export { SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
