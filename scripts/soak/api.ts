/** A small JSON client of Postern's HTTP API for the soak (every call has a deadline). */

/** One answer: the status (0 = no HTTP answer) and the parsed JSON body. */
export interface ApiAnswer {
  status: number;
  body: any;
}

/** Calls `method path` on `baseUrl` with `key` as bearer (API key or admin token); never throws. */
export type SoakApi = (method: string, path: string, key: string, body?: unknown, headers?: Record<string, string>) => Promise<ApiAnswer>;

/** An API client of `baseUrl`; each request gives up after `timeoutMs` (default 10 s). */
export function soakApi(baseUrl: string, timeoutMs = 10_000): SoakApi {
  return async (method, path, key, body, headers) => {
    try {
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: keep the text
      }
      return { status: res.status, body: parsed };
    } catch (err) {
      return { status: 0, body: String(err) };
    }
  };
}

/** Calls `api` and throws unless the status is `expected`. */
export async function apiExpect(api: SoakApi, expected: number, method: string, path: string, key: string, body?: unknown): Promise<any> {
  const r = await api(method, path, key, body);
  if (r.status !== expected) throw new Error(`${method} ${path}: expected ${expected}, got ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}
