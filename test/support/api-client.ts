/** Answer of {@link ApiClient}: status, JSON body (or text) and headers. */
export interface ApiAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/** Calls Postern's API; `key` is an API key (or the admin token). */
export type ApiClient = (
  method: string,
  path: string,
  opts?: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> },
) => Promise<ApiAnswer>;

/** An {@link ApiClient} for the ingest at `baseUrl` (e.g. `http://127.0.0.1:3000`). */
export function apiClient(baseUrl: string): ApiClient {
  return async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers, body });
    const text = await res.text();
    let json: unknown = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    const answer = { status: res.status, body: json, headers: res.headers };
    specCheck?.(method, path, answer);
    return answer;
  };
}

/**
 * Called with every answer {@link apiClient} gets, when set: the e2e tests check each answer of a
 * documented route against `/openapi.json` through it (`test/support/openapi-validator.ts`).
 */
let specCheck: ((method: string, path: string, answer: ApiAnswer) => void) | undefined;

/** Sets (or, with undefined, clears) the check every answer of {@link apiClient} goes through. */
export function setSpecCheck(check: typeof specCheck): void {
  specCheck = check;
}
