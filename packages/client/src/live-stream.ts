import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { PosternApiError, PosternConnectionError } from './errors.js';
import { errorOf, retryDelayMs, type TransportSettings } from './transport.js';

/** One change of a delivery, as `GET /v1/deliveries/stream` sends it (`event: delivery`). */
export interface LiveDelivery {
  /** The feed entry's id: resume after it with `lastEventId`. */
  id: string;
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** After the change: `pending` (a retry is scheduled), `succeeded`, `failed` or `cancelled`. */
  status: string;
  /** The attempt that finished (1-based); null when the delivery ended or was held without one. */
  attempt: number | null;
  responseStatus: number | null;
  /** The attempt's error code, or why the delivery ended without one; null for a success. */
  error: string | null;
  durationMs: number | null;
  /** ISO 8601, with `pending`. */
  nextAttemptAt: string | null;
  /** ISO 8601. */
  at: string;
}

/**
 * What iterating a live stream yields: a `delivery` change, or a `reset` — the stream resumed
 * after a gap (changes were trimmed from the window it keeps, or it reconnected too late): reload
 * whatever is shown from the delivery log.
 */
export type LiveStreamMessage = { type: 'delivery'; delivery: LiveDelivery } | { type: 'reset'; reason: string };

/** `deliveries.stream` filters and options. */
export interface LiveStreamQuery {
  endpointId?: string;
  /** The delivery's status after the change; a change never carries `in_flight`. */
  status?: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  /** Exact, `prefix.*` or `*`; no other wildcard. */
  eventType?: string;
}

/** Options of `deliveries.stream`. */
export interface LiveStreamOptions {
  signal?: AbortSignal;
  /** Start after this entry id (as a `Last-Event-ID`): what came since is sent first. */
  lastEventId?: string;
  /**
   * Reconnect (with `Last-Event-ID`) when the connection drops or the server restarts; default
   * true. Waits as the server's `retry:` says, doubling while it keeps failing (at most
   * `maxRetryDelayMs`).
   */
  reconnect?: boolean;
  /** Called on each (re)connection, with whether it is a reconnection. */
  onConnect?: (reconnected: boolean) => void;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

const ENDED_BY_CREDENTIAL: Record<string, number> = { credential_revoked: 401, session_revoked: 401, session_expired: 401, org_suspended: 403 };

/**
 * Reads `GET /v1/deliveries/stream` as an async iterable of {@link LiveStreamMessage}s, parsing
 * the Server-Sent Events with `eventsource-parser`. An error answer before the stream throws
 * `PosternApiError` (429 `too_many_streams`, 404, 401 …); an `end` event for a revoked key, ended
 * session or suspended org throws `PosternApiError` with that reason as its code. A dropped
 * connection or a restart (`end` `shutting_down`) reconnects with `Last-Event-ID` unless
 * `reconnect` is false (then `PosternConnectionError`). `break` or the signal ends it quietly.
 */
export async function* liveStream(settings: TransportSettings, query: LiveStreamQuery, options: LiveStreamOptions): AsyncGenerator<LiveStreamMessage> {
  const url = new URL('v1/deliveries/stream', settings.baseUrl);
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  let lastEventId = options.lastEventId;
  let retryMs = 3000;
  let failures = 0;
  for (let connection = 0; !options.signal?.aborted; connection++) {
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let dropped: unknown = null;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...settings.headers };
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
      let res: Response;
      const timer = setTimeout(() => controller.abort(new DOMException('timed out', 'TimeoutError')), settings.timeoutMs);
      try {
        res = await settings.fetch(url, { headers, signal: controller.signal });
      } catch (err) {
        if (options.signal?.aborted) return;
        throw new PosternConnectionError(`could not reach ${url.origin}: ${(err as Error).message}`, { cause: err });
      } finally {
        clearTimeout(timer);
      }
      if (!res.ok) throw await errorOf(res);
      failures = 0;
      options.onConnect?.(connection > 0);
      const pending: EventSourceMessage[] = [];
      const parser = createParser({ onEvent: (m) => pending.push(m), onRetry: (ms) => (retryMs = ms) });
      const decoder = new TextDecoder();
      let ended: string | null = null;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          while (pending.length > 0) {
            const m = pending.shift()!;
            if (m.event === 'delivery') {
              if (m.id) lastEventId = m.id;
              yield { type: 'delivery', delivery: { id: m.id ?? '', ...(JSON.parse(m.data) as Omit<LiveDelivery, 'id'>) } };
            } else if (m.event === 'reset') {
              yield { type: 'reset', reason: (JSON.parse(m.data) as { reason: string }).reason };
            } else if (m.event === 'end') {
              ended = (JSON.parse(m.data) as { reason: string }).reason;
            }
          }
          if (ended !== null) break;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        dropped = err;
      }
      if (ended !== null && ended !== 'shutting_down') {
        throw new PosternApiError(ENDED_BY_CREDENTIAL[ended] ?? 410, ended, `the live stream was ended by Postern: ${ended}`);
      }
      dropped ??= new Error(ended ?? 'the server closed the stream');
    } catch (err) {
      if ((err instanceof PosternApiError && err.status !== 503) || options.reconnect === false) throw err;
      dropped = err;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      controller.abort();
    }
    if (options.reconnect === false) throw new PosternConnectionError(`the live stream from ${url.origin} ended: ${(dropped as Error).message}`, { cause: dropped });
    failures++;
    await sleep(failures === 1 ? retryMs : retryDelayMs(failures, null, Math.max(retryMs, settings.maxRetryDelayMs)), options.signal);
  }
}
