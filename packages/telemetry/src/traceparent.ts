/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header):
 * `00-<32 hex trace id>-<16 hex parent span id>-<2 hex flags>`. Postern stores it with a
 * delivery's queue job (55 bytes), so an attempt's span joins the trace of the accepted event.
 */

/** The parts of a `traceparent` that a span context needs. */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero. */
  spanId: string;
  /** Trace flags; bit 0 = sampled. */
  traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * Parses a `traceparent` header value; null when it is absent or malformed, or its trace or span
 * id is all zeros, or its version is `ff` (all refused by the spec). Versions above 00 are read as
 * 00 when the value has exactly 00's shape.
 */
export function parseTraceparent(value: string | null | undefined): TraceParent | null {
  const m = TRACEPARENT.exec((value ?? '').trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags] = m as unknown as [string, string, string, string, string];
  if (version === 'ff' || /^0+$/.test(traceId) || /^0+$/.test(spanId)) return null;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
}

/** Formats a span context as a version-00 `traceparent`. */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
