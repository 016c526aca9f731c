// The dashboard's only way to Postern: the public v1 API, with the API key the user entered.

/** An API answer that was not 2xx, with a sentence a person can act on. */
export class ApiError extends Error {
  constructor(status, code, message, sentence) {
    super(message || code);
    this.status = status;
    this.code = code;
    this.sentence = sentence;
  }
}

const SCOPE_PATTERN = /(events:write|webhooks:read|webhooks:write)/;

/**
 * Turns `{error: {code, message}}` into a sentence. Codes the dashboard can meet get their own
 * words; anything else still names what Postern said.
 */
export function explain(status, code, message) {
  const detail = message ? message.replace(/\.$/, '') : '';
  switch (code) {
    case 'network':
      return 'Postern could not be reached. Check that it is running and your connection works, then try again.';
    case 'unauthorized':
      return 'Postern did not accept this API key: it may be mistyped or revoked. Sign out and paste a valid key.';
    case 'session_expired':
      return 'This session has expired. Open the page again from the application that sent you here.';
    case 'session_revoked':
      return 'This session was ended. Open the page again from the application that sent you here.';
    case 'api_key_required':
      return 'This needs an API key: a portal session cannot do it.';
    case 'insufficient_scope': {
      const scope = SCOPE_PATTERN.exec(message ?? '')?.[1] ?? 'another';
      return `This API key is not allowed to do that: it needs the “${scope}” scope.`;
    }
    case 'org_suspended':
      return 'This organisation is suspended, so Postern refuses its requests.';
    case 'not_found': {
      const what = /^(.*) not found$/.exec(detail)?.[1];
      return what
        ? `That ${what} does not exist, or it belongs to another organisation.`
        : 'Postern does not know that address. The page may be out of date.';
    }
    case 'endpoint_inactive':
      return 'The endpoint is paused, disabled or deleted. Resume it first, then try again.';
    case 'in_flight':
      return 'The delivery is being attempted right now. Try again when that attempt has finished.';
    case 'delivery_pending':
      return 'The delivery still has attempts to come, so it cannot be redelivered yet.';
    case 'delivery_finished':
      return 'The delivery has already finished, so there is no next attempt to send. Redeliver it instead.';
    case 'delivery_held':
      return 'The delivery is held while its endpoint is paused or disabled. Resume the endpoint instead.';
    case 'not_waiting':
      return 'The delivery is not waiting for a retry right now (its first attempt is queued, or it waits for a free slot).';
    case 'redelivery_not_offered':
      return "This endpoint's policy does not offer redelivery.";
    case 'recreate_required':
      return "This endpoint's policy does not allow resuming it after it was disabled: delete it and create it again.";
    case 'invalid_request':
    case 'invalid_policy':
    case 'unsafe_url':
      return `Postern refused the request: ${detail}.`;
    case 'service_unavailable':
      return 'Postern cannot reach its storage right now. Nothing was changed; try again in a few seconds.';
    case 'internal_error':
      return 'Something went wrong inside Postern. Try again; if it keeps happening, check the server logs.';
    default:
      return `Postern answered ${status}${detail ? `: ${detail}` : ''}.`;
  }
}

/**
 * A client for `/v1` on the page's own origin (the dashboard is served by Postern). `getKey`
 * returns the current API key. Methods resolve with the parsed JSON and reject with {@link ApiError}.
 */
export function createApi(getKey) {
  const base = new URL('../', document.baseURI);
  async function request(method, path, body, extraHeaders = {}) {
    const headers = { ...extraHeaders, authorization: `Bearer ${getKey()}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(new URL(path.replace(/^\//, ''), base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    } catch {
      throw new ApiError(0, 'network', '', explain(0, 'network', ''));
    }
    const text = await res.text();
    let json;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.ok && json && typeof json === 'object' && res.headers.get('idempotent-replayed') === 'true') Object.defineProperty(json, 'replayed', { value: true });
    if (!res.ok) {
      const code = json?.error?.code ?? `http_${res.status}`;
      const message = json?.error?.message ?? '';
      throw new ApiError(res.status, code, message, explain(res.status, code, message));
    }
    return json;
  }
  /**
   * Reads a Server-Sent Events answer (`GET /v1/deliveries/stream`) with fetch, so the key goes in
   * the Authorization header as for every call (EventSource cannot send one). Calls `onEvent({event,
   * id, data})` per event; resolves when the stream ends, rejects with {@link ApiError} for an error
   * answer or a dropped connection. `signal` closes it; `onOpen()` runs once the stream is open.
   */
  async function stream(path, onEvent, signal, onOpen = () => undefined) {
    let res;
    try {
      res = await fetch(new URL(path.replace(/^\//, ''), base), { headers: { authorization: `Bearer ${getKey()}`, accept: 'text/event-stream' }, cache: 'no-store', signal });
    } catch {
      throw new ApiError(0, 'network', '', explain(0, 'network', ''));
    }
    if (!res.ok || !res.body) {
      const json = await res.json().catch(() => undefined);
      const code = json?.error?.code ?? `http_${res.status}`;
      throw new ApiError(res.status, code, json?.error?.message ?? '', explain(res.status, code, json?.error?.message ?? ''));
    }
    onOpen();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch {
        throw new ApiError(0, 'network', '', explain(0, 'network', ''));
      }
      if (chunk.done) return;
      buffered += chunk.value;
      let end = buffered.indexOf('\n\n');
      while (end >= 0) {
        const message = { event: 'message', id: null, data: '' };
        for (const line of buffered.slice(0, end).split('\n')) {
          const colon = line.indexOf(':');
          if (colon <= 0) continue;
          const field = line.slice(0, colon);
          const value = line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') message.event = value;
          else if (field === 'id') message.id = value;
          else if (field === 'data') message.data += value;
        }
        buffered = buffered.slice(end + 2);
        end = buffered.indexOf('\n\n');
        if (message.data) onEvent({ ...message, data: JSON.parse(message.data) });
      }
    }
  }
  return {
    stream,
    get: (path) => request('GET', path),
    post: (path, body, headers) => request('POST', path, body, headers),
    patch: (path, body) => request('PATCH', path, body),
    del: (path) => request('DELETE', path),
  };
}
