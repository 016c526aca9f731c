import { PosternApiError, PosternConnectionError } from './errors.js';
import { stringifyBody } from './raw-json.js';

/** Options every call takes. */
export interface RequestOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
}

/**
 * Options of a call the API makes idempotent: `POST /v1/events` and the actions (redeliver,
 * redeliver-failed, recover, pause, resume, rotate-secret, test).
 */
export interface CallOptions extends RequestOptions {
  /**
   * Sent as `Idempotency-Key` (1–200 characters): a repeat within 24 h gets the first answer
   * again and changes nothing. With one, the call is also retried after a network error.
   */
  idempotencyKey?: string;
}

/** How the client talks HTTP: where, with which headers, and how it retries. */
export interface TransportSettings {
  baseUrl: string;
  headers: Record<string, string>;
  maxRetries: number;
  maxRetryDelayMs: number;
  timeoutMs: number;
  fetch: typeof fetch;
}

/** One request to make. `query` values that are undefined are left out. */
export interface RequestSpec extends CallOptions {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Sending it again changes nothing (e.g. a batch whose every event has an idempotency key): retried after a network error too. */
  safeToRepeat?: boolean;
}

const RETRIED_STATUSES = new Set([503]);
const BASE_BACKOFF_MS = 250;

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null || header.trim() === '') return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(header)) return Math.round(Number(header) * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** The wait before retry number `retry` (1-based): `Retry-After` when given, else 250 ms doubling; at most `maxMs`. */
export function retryDelayMs(retry: number, retryAfter: number | null, maxMs: number): number {
  const wanted = retryAfter ?? BASE_BACKOFF_MS * 2 ** (retry - 1);
  return Math.min(Math.max(0, wanted), maxMs);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The `PosternApiError` of an error answer (its `{error:{code,message}}`, or `http_<status>`). */
export async function errorOf(res: Response): Promise<PosternApiError> {
  const text = await res.text().catch(() => '');
  let code = `http_${res.status}`;
  let message = text.slice(0, 500) || res.statusText || `HTTP ${res.status}`;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // Not JSON (a proxy's page): the status is the code.
  }
  return new PosternApiError(res.status, code, message, res.headers.get('x-request-id'));
}

/**
 * Makes one API call: JSON in and out, `PosternApiError` for an error answer,
 * `PosternConnectionError` when no answer came. A 503 is retried up to `maxRetries` times, waiting
 * what `Retry-After` asks (at most `maxRetryDelayMs`): `service_unavailable` (Postern could not
 * reach Redis; nothing was stored) always, `not_durable` (stored, not yet confirmed by replicas)
 * only for calls that are safe to repeat; a network error is retried likewise for calls that are
 * safe to repeat — reads, deletes, and calls with an idempotency key (header or, for an event, body).
 */
export async function request<T>(settings: TransportSettings, spec: RequestSpec): Promise<T> {
  const url = new URL(spec.path, settings.baseUrl);
  for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { accept: 'application/json', ...settings.headers };
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  if (spec.idempotencyKey !== undefined) {
    // A header carries printable ASCII only: say so here rather than fail inside fetch.
    if (!/^[\x20-\x7e]{1,200}$/.test(spec.idempotencyKey)) {
      throw new TypeError('idempotencyKey must be 1 to 200 printable ASCII characters (it is sent as the Idempotency-Key header); for events.create, put another key in the body as idempotencyKey');
    }
    headers['idempotency-key'] = spec.idempotencyKey;
  }
  const body = spec.body === undefined ? undefined : stringifyBody(spec.body);
  // An idempotency key in the body (events.create) makes a call as safe to repeat as the header does.
  const bodyKey = spec.body !== null && typeof spec.body === 'object' && typeof (spec.body as { idempotencyKey?: unknown }).idempotencyKey === 'string';
  const repeatable = spec.method === 'GET' || spec.method === 'DELETE' || spec.idempotencyKey !== undefined || bodyKey || spec.safeToRepeat === true;

  for (let retry = 0; ; retry++) {
    const signals = [AbortSignal.timeout(settings.timeoutMs), ...(spec.signal ? [spec.signal] : [])];
    let res: Response;
    try {
      res = await settings.fetch(url, { method: spec.method, headers, body, signal: AbortSignal.any(signals) });
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      if (repeatable && retry < settings.maxRetries) {
        await sleep(retryDelayMs(retry + 1, null, settings.maxRetryDelayMs), spec.signal);
        continue;
      }
      const timedOut = (err as { name?: string }).name === 'TimeoutError';
      throw new PosternConnectionError(timedOut ? `no answer from ${url.origin} within ${settings.timeoutMs} ms` : `could not reach ${url.origin}: ${(err as Error).message}`, { cause: err });
    }
    if (res.ok) {
      if (res.status === 204) return undefined as T;
      const text = await res.text();
      return (text === '' ? undefined : JSON.parse(text)) as T;
    }
    if (RETRIED_STATUSES.has(res.status) && retry < settings.maxRetries && (repeatable || !(await storedAnyway(res)))) {
      await res.body?.cancel().catch(() => undefined);
      await sleep(retryDelayMs(retry + 1, retryAfterMs(res.headers.get('retry-after'), Date.now()), settings.maxRetryDelayMs), spec.signal);
      continue;
    }
    throw await errorOf(res);
  }
}

/**
 * Whether a 503 says its request was stored all the same: `not_durable` (ACCEPT_DURABILITY=replica:
 * the event is written, its replicas did not confirm it in time). Sent again without an
 * idempotency key, it would be a second event, so such a call is not retried: the error goes to
 * the caller, who can retry with a key.
 */
async function storedAnyway(res: Response): Promise<boolean> {
  const answer = (await res
    .clone()
    .json()
    .catch(() => null)) as { error?: { code?: unknown } } | null;
  return answer?.error?.code === 'not_durable';
}

/**
 * Makes one call whose answer is NDJSON and yields its lines parsed, as they arrive: the body is
 * never held whole. `timeoutMs` bounds the wait for the answer's headers only (an export may take
 * minutes to stream); `signal` aborts the stream. An error answer throws `PosternApiError` before
 * the first line (503 retried as {@link request} does); a stream cut short (the connection ended
 * without its final chunk) throws `PosternConnectionError`, so a partial export is never taken for
 * a whole one.
 */
export async function* requestLines<T>(settings: TransportSettings, spec: Omit<RequestSpec, 'body' | 'idempotencyKey'>): AsyncGenerator<T> {
  const url = new URL(spec.path, settings.baseUrl);
  for (const [name, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers: Record<string, string> = { accept: 'application/x-ndjson', ...settings.headers };
  let res: Response | undefined;
  const controller = new AbortController();
  const onAbort = () => controller.abort(spec.signal?.reason);
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (let retry = 0; res === undefined; retry++) {
      const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), settings.timeoutMs);
      let answer: Response;
      try {
        answer = await settings.fetch(url, { method: spec.method, headers, signal: controller.signal });
      } catch (err) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        const timedOut = (controller.signal.reason as { name?: string } | undefined)?.name === 'TimeoutError';
        throw new PosternConnectionError(timedOut ? `no answer from ${url.origin} within ${settings.timeoutMs} ms` : `could not reach ${url.origin}: ${(err as Error).message}`, { cause: err });
      } finally {
        clearTimeout(timer);
      }
      if (answer.ok) res = answer;
      else if (RETRIED_STATUSES.has(answer.status) && retry < settings.maxRetries) {
        await answer.body?.cancel().catch(() => undefined);
        await sleep(retryDelayMs(retry + 1, retryAfterMs(answer.headers.get('retry-after'), Date.now()), settings.maxRetryDelayMs), spec.signal);
      } else throw await errorOf(answer);
    }
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.trim() !== '') yield JSON.parse(line) as T;
          newline = buffered.indexOf('\n');
        }
      }
    } catch (err) {
      if (spec.signal?.aborted) throw spec.signal.reason;
      throw new PosternConnectionError(`the stream from ${url.origin} ended before it was complete: ${(err as Error).message}`, { cause: err });
    }
    buffered += decoder.decode();
    if (buffered.trim() !== '') yield JSON.parse(buffered) as T;
  } finally {
    spec.signal?.removeEventListener('abort', onAbort);
    // A consumer that stops early (break) closes the connection, so the server stops too.
    controller.abort();
  }
}
