import { headerNameProblem, isValidHeaderValue } from './request-settings.js';
import { validateEndpointUrl } from './url-rules.js';

/**
 * Transformations (docs/transformations.md): an endpoint's own JavaScript `handler(webhook)` that
 * reshapes each request before it is signed and sent. The code runs in a WebAssembly sandbox
 * (`@postern/sandbox`); everything here is pure: what the handler receives, what a valid answer
 * is, and the request it becomes.
 */

/** Longest transformation code accepted, in UTF-8 bytes (64 KiB). */
export const MAX_TRANSFORMATION_CODE_BYTES = 64 * 1024;

/** Largest body a transformation may produce, in UTF-8 bytes (1 MiB); larger is `bad_result`. */
export const MAX_TRANSFORMED_BODY_BYTES = 1024 * 1024;

/** How much of a transformed body the delivery log keeps per attempt, in UTF-8 bytes. */
export const TRANSFORMED_BODY_EXCERPT_BYTES = 2048;

/** Most extra headers a transformation may add. */
export const MAX_TRANSFORMED_HEADERS = 20;

/** Default wall-clock cap of one handler call, ms (`TRANSFORM_TIMEOUT_MS`). */
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 50;

/** Memory cap of one transformation's sandbox, bytes (16 MiB). */
export const TRANSFORM_MEMORY_LIMIT_BYTES = 16 * 1024 * 1024;

/** The methods a transformation may choose; Postern sends `POST` unless it says otherwise. */
export const TRANSFORM_METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** A method a transformed request may use. */
export type TransformMethod = (typeof TRANSFORM_METHODS)[number];

/**
 * An endpoint's transformation as stored: the code, whether it runs, and its version (1 for the
 * first code, +1 each time the code changes; switching it on or off keeps the version).
 */
export interface TransformationSettings {
  code: string;
  enabled: boolean;
  version: number;
  /** When the code or the switch last changed, epoch ms. */
  updatedAt: number;
}

/**
 * Why a transformation failed, after `transformation_failed:` in the attempt's error code:
 * `error` (it threw, or has no `handler`), `timeout` (over `TRANSFORM_TIMEOUT_MS`), `memory`
 * (over {@link TRANSFORM_MEMORY_LIMIT_BYTES}, or the stack ran out), `bad_result` (its answer is
 * not a request Postern can send), `unsafe_url` (it chose a URL that is not a public destination).
 */
export type TransformationFailure = 'error' | 'timeout' | 'memory' | 'bad_result' | 'unsafe_url';

/** Every {@link TransformationFailure}, in the order the docs list them. */
export const TRANSFORMATION_FAILURES: readonly TransformationFailure[] = Object.freeze(['error', 'timeout', 'memory', 'bad_result', 'unsafe_url']);

/**
 * Failures that may pass on their own (the process was busy, a large event): retried on the
 * policy's schedule. The others are deterministic — the same code on the same event fails the same
 * way — so the delivery fails at once.
 */
export const RETRIED_TRANSFORMATION_FAILURES: ReadonlySet<string> = new Set(['timeout', 'memory']);

/** The cancel reason of a delivery its transformation dropped (`cancel: true`). */
export const TRANSFORMATION_CANCEL_REASON = 'transformation:cancel';

/**
 * What `handler(webhook)` receives. `payload` is the event's `data` as the attempt would send it
 * (the pre-attempt check's frozen body, where there is one); `eventType`, `eventId` and
 * `timestamp` are read-only (changing them changes nothing); `method`, `url` and `headers` start
 * as Postern would send them (`POST`, the endpoint's URL, no extra headers).
 */
export interface TransformationInput {
  eventType: string;
  eventId: string;
  /** The envelope's `timestamp` (ISO 8601). */
  timestamp: string;
  payload: unknown;
  method: TransformMethod;
  url: string;
  headers: Record<string, string>;
}

/**
 * The request a transformation asked for: its method, URL, extra headers (lower-case names),
 * body and content type — or `cancel` (nothing sent; the delivery ends `cancelled`).
 */
export type TransformedRequest =
  | { kind: 'send'; method: TransformMethod; url: string; headers: Record<string, string>; body: string; contentType: string }
  | { kind: 'cancel' };

/**
 * The input of a handler built from the envelope an attempt would send (`{"id","type","timestamp","data"}`).
 *
 * @throws SyntaxError when the envelope is not JSON (Postern built it, so it always is).
 */
export function transformationInput(envelope: string, endpointUrl: string): TransformationInput {
  const parsed = JSON.parse(envelope) as { id?: unknown; type?: unknown; timestamp?: unknown; data?: unknown };
  return {
    eventType: String(parsed.type ?? ''),
    eventId: String(parsed.id ?? ''),
    timestamp: String(parsed.timestamp ?? ''),
    payload: parsed.data ?? null,
    method: 'POST',
    url: endpointUrl,
    headers: {},
  };
}

/** A handler's answer with its fields' types checked (what `planTransformedRequest` reads). */
interface ResultFields {
  cancel?: boolean;
  method?: string;
  url?: string;
  headers?: Record<string, string>;
  payload?: unknown;
  body?: string;
  contentType?: string;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Checks the answer's field types, in the order the fields are listed, and says the first problem.
 * Hand-written rather than a schema: it runs once per transformed attempt, on the sender's hot path.
 */
function resultFields(answer: Record<string, unknown>): { ok: true; fields: ResultFields } | { ok: false; message: string } {
  const { cancel, method, url, headers, body, contentType } = answer;
  if (cancel !== undefined && typeof cancel !== 'boolean') return { ok: false, message: 'cancel must be true or false' };
  if (method !== undefined && typeof method !== 'string') return { ok: false, message: 'method must be a string' };
  if (url !== undefined && typeof url !== 'string') return { ok: false, message: 'url must be a string' };
  if (headers !== undefined) {
    if (!isPlainObject(headers)) return { ok: false, message: 'headers must be an object of strings' };
    for (const value of Object.values(headers)) if (typeof value !== 'string') return { ok: false, message: 'headers must map names to strings' };
  }
  if (body !== undefined && typeof body !== 'string') return { ok: false, message: 'body must be a string' };
  if (contentType !== undefined && typeof contentType !== 'string') return { ok: false, message: 'contentType must be a string' };
  return { ok: true, fields: answer as ResultFields };
}

/** What {@link planTransformedRequest} decided: the request, or why the answer cannot be sent. */
export type TransformedRequestPlan = { ok: true; request: TransformedRequest } | { ok: false; reason: 'bad_result'; message: string };

/**
 * Turns a handler's answer into the request to send, or refuses it as `bad_result` with a message
 * for people. Rules, in order:
 * - the answer is an object (the input, changed or not); `cancel: true` drops the delivery;
 * - `method` is `POST`, `PUT` or `PATCH` (any case); absent = `POST`;
 * - `url` passes the endpoint URL's shape check (`validateEndpointUrl`); absent = the endpoint's.
 *   Its addresses are checked where it is sent, like the endpoint's own;
 * - `headers`: at most {@link MAX_TRANSFORMED_HEADERS}, names RFC 9110 tokens that are not
 *   Postern's (`webhook-*`) nor hop-by-hop (`headerNameProblem`; `authorization` is allowed), values
 *   valid header values; `content-type` may be given here instead of `contentType`;
 * - the body: `body` (a string) with `contentType` (default `text/plain; charset=utf-8`), else
 *   `payload` as JSON (`application/json`), which must then be there (`null` counts; left out,
 *   the answer is refused); at most {@link MAX_TRANSFORMED_BODY_BYTES} bytes.
 * The body replaces the whole envelope: a handler that wants the envelope returns it as its payload.
 */
export function planTransformedRequest(answer: unknown, input: Pick<TransformationInput, 'url'>): TransformedRequestPlan {
  const bad = (message: string): TransformedRequestPlan => ({ ok: false, reason: 'bad_result', message });
  if (!isPlainObject(answer)) return bad('handler must return an object (the webhook it was given, changed or not)');
  const checked = resultFields(answer);
  if (!checked.ok) return bad(checked.message);
  const r = checked.fields;
  if (r.cancel === true) return { ok: true, request: { kind: 'cancel' } };
  const method = (r.method ?? 'POST').toUpperCase();
  if (!(TRANSFORM_METHODS as readonly string[]).includes(method)) return bad(`method must be one of ${TRANSFORM_METHODS.join(', ')}`);
  const url = r.url ?? input.url;
  const shape = validateEndpointUrl(url);
  if (!shape.ok) return bad(`url is not usable (${shape.reason})`);
  const headers: Record<string, string> = {};
  let contentType = r.contentType;
  const entries = Object.entries(r.headers ?? {});
  if (entries.length > MAX_TRANSFORMED_HEADERS) return bad(`at most ${MAX_TRANSFORMED_HEADERS} headers`);
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!isValidHeaderValue(value)) return bad(`header ${name}: value is not a valid header value`);
    if (lower === 'content-type') {
      contentType ??= value;
      continue;
    }
    const problem = headerNameProblem(name);
    if (problem === 'not_a_token') return bad(`header ${name}: not a valid header name`);
    if (problem === 'reserved') return bad(`header ${name}: Postern's own or a hop-by-hop header, it cannot be set`);
    headers[lower] = value;
  }
  let body: string;
  if (r.body !== undefined) {
    body = r.body;
    contentType ??= 'text/plain; charset=utf-8';
  } else {
    // A handler that left `payload` out (`return {}`, `delete w.payload`) would otherwise send the
    // body `null` and see the delivery succeed; `payload: null` still sends `null` on purpose.
    if (r.payload === undefined) return bad('payload is required (any JSON value, null included), or a body string');
    body = JSON.stringify(r.payload);
    contentType ??= 'application/json';
  }
  if (!isValidHeaderValue(contentType) || contentType === '') return bad('contentType is not a valid header value');
  if (Buffer.byteLength(body) > MAX_TRANSFORMED_BODY_BYTES) return bad(`body is larger than ${MAX_TRANSFORMED_BODY_BYTES} bytes`);
  return { ok: true, request: { kind: 'send', method: method as TransformMethod, url: shape.url.toString(), headers, body, contentType } };
}

/**
 * What the delivery log keeps of a transformed request, per attempt: the version that ran, the
 * method, URL, content type, extra headers and the first {@link TRANSFORMED_BODY_EXCERPT_BYTES}
 * bytes of the body.
 */
export interface TransformedRequestRecord {
  version: number;
  method: string;
  url: string;
  contentType: string;
  headers: Record<string, string>;
  bodyExcerpt: string;
  bodyTruncated: boolean;
}

/** The log's record of a transformed request sent by version `version` (see {@link TransformedRequestRecord}). */
export function transformedRequestRecord(version: number, request: Extract<TransformedRequest, { kind: 'send' }>): TransformedRequestRecord {
  const bytes = Buffer.from(request.body);
  const truncated = bytes.length > TRANSFORMED_BODY_EXCERPT_BYTES;
  return {
    version,
    method: request.method,
    url: request.url,
    contentType: request.contentType,
    headers: request.headers,
    bodyExcerpt: truncated ? bytes.subarray(0, TRANSFORMED_BODY_EXCERPT_BYTES).toString('utf8') : request.body,
    bodyTruncated: truncated,
  };
}

/**
 * Whether `code` fits {@link MAX_TRANSFORMATION_CODE_BYTES}. The sandbox checks the syntax and
 * that a `handler` function is defined.
 */
export function transformationCodeFits(code: string): boolean {
  return Buffer.byteLength(code) <= MAX_TRANSFORMATION_CODE_BYTES;
}

/**
 * The stored transformation after a create or change: the version goes up by one when the code
 * changed, and stays when only `change.enabled` changed (absent = as before; true for a new
 * transformation). `change` null removes it. Versions never go back for one endpoint: a new code
 * is one past both the current version and `lastVersion`, the highest the endpoint ever had (so a
 * transformation removed at version 3 and added again starts at 4; 1 for the endpoint's first).
 */
export function nextTransformation(current: TransformationSettings | null, change: { code: string; enabled?: boolean } | null, nowMs: number, lastVersion = 0): TransformationSettings | null {
  if (change === null) return null;
  const enabled = change.enabled ?? current?.enabled ?? true;
  if (current && current.code === change.code) return current.enabled === enabled ? current : { ...current, enabled, updatedAt: nowMs };
  return { code: change.code, enabled, version: Math.max(current?.version ?? 0, lastVersion) + 1, updatedAt: nowMs };
}
