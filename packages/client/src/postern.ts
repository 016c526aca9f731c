import type * as T from './api-types.js';
import { ApiKeys, AuditLog, Deliveries, Endpoints, Events, Notifications, CurrentOrg, Orgs, PlatformKeys, Policies, EventTypes, Portal, Transformations, type Call, type LinesCall } from './resources.js';
import { liveStream } from './live-stream.js';
import { request, requestLines, type RequestOptions, type TransportSettings } from './transport.js';

/** Options of {@link Postern}. Give one credential: `apiKey`, `platformKey` with `orgId`, or `adminToken`. */
export interface PosternOptions {
  /** Where ingest is, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** An org's API key (`pk_…`). */
  apiKey?: string;
  /** A platform key (`ppk_…`); acts for `orgId`, sent as `Postern-Org`. */
  platformKey?: string;
  /** With `platformKey`: the org every call acts for (`org_…`). */
  orgId?: string;
  /** The instance's `ADMIN_TOKEN`, for `orgs` and `platformKeys`. */
  adminToken?: string;
  /** Retries of a call after a 503 (or, for calls safe to repeat, a network error); default 2, 0 turns retrying off. */
  maxRetries?: number;
  /** The longest wait before a retry, ms, whatever `Retry-After` asks; default 10 000. */
  maxRetryDelayMs?: number;
  /** How long one request may take before it counts as a network error, ms; default 30 000. */
  timeoutMs?: number;
  /** The fetch to use; default the global one (Node ≥ 20). */
  fetch?: typeof fetch;
}

const DEFAULT_MAX_RETRIES = 2;
const DEFAULT_MAX_RETRY_DELAY_MS = 10_000;
const DEFAULT_TIMEOUT_MS = 30_000;

function checkedSettings(options: PosternOptions): TransportSettings {
  if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//i.test(options.baseUrl)) throw new TypeError('Postern: baseUrl must be an http(s) URL, e.g. http://localhost:3000');
  const credentials = [options.apiKey, options.platformKey, options.adminToken].filter((c) => c !== undefined);
  if (credentials.length > 1) throw new TypeError('Postern: give one credential: apiKey, platformKey (with orgId) or adminToken');
  if (options.platformKey !== undefined && !options.orgId) throw new TypeError('Postern: a platformKey acts for one org: give orgId too');
  if (options.orgId !== undefined && options.platformKey === undefined) throw new TypeError('Postern: orgId goes with platformKey (an API key already belongs to its org)');
  for (const [name, value] of [['maxRetries', options.maxRetries], ['maxRetryDelayMs', options.maxRetryDelayMs], ['timeoutMs', options.timeoutMs]] as const) {
    if (value !== undefined && !(Number.isInteger(value) && value >= 0)) throw new TypeError(`Postern: ${name} must be an integer ≥ 0`);
  }
  const headers: Record<string, string> = {};
  const token = credentials[0];
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (options.orgId !== undefined) headers['postern-org'] = options.orgId;
  return {
    baseUrl: options.baseUrl.replace(/\/+$/, '') + '/',
    headers,
    maxRetries: options.maxRetries ?? DEFAULT_MAX_RETRIES,
    maxRetryDelayMs: options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
  };
}

/**
 * A typed client of Postern's HTTP API (`/openapi.json`): one object per resource, answers typed
 * from the API's own schemas, `PosternApiError` (`status`, `code`, `message`) for error answers,
 * `for await` over paged lists, idempotency keys on creates and actions, and retries of 503s
 * that honour `Retry-After` (bounded by `maxRetryDelayMs`).
 *
 * ```ts
 * const postern = new Postern({ baseUrl: 'http://localhost:3000', apiKey: process.env.POSTERN_API_KEY });
 * await postern.events.create({ type: 'invoice.paid', data: { id: 'in_1' } }, { idempotencyKey: 'in_1-paid' });
 * for await (const d of postern.deliveries.list({ endpointId, status: 'failed' })) console.log(d.id, d.lastError);
 * ```
 *
 * @throws TypeError from the constructor for a bad `baseUrl`, two credentials, a `platformKey`
 *   without `orgId`, or a negative or fractional limit.
 */
export class Postern {
  /** Events: create, get, list, eraseData, eraseDataByIdempotencyKey. */
  readonly events: Events;
  /** Endpoints: create, list, get, update, delete, secret, rotateSecret, pause, resume, test, timeline, redeliverFailed, recover. */
  readonly endpoints: Endpoints;
  /** Deliveries: get, attempts, list (per endpoint), export (the whole log, streamed), stream (live changes), redeliver, sendNow. */
  readonly deliveries: Deliveries;
  /** The org's API keys: create, list, revoke. */
  readonly apiKeys: ApiKeys;
  /** Platform keys (admin token): create, list, revoke. */
  readonly platformKeys: PlatformKeys;
  /** Orgs (admin token): create, suspend, reactivate. */
  readonly orgs: Orgs;
  /** Presets, timelines, previews. */
  readonly policies: Policies;
  /** Breaker notifications. */
  readonly notifications: Notifications;
  /** The calling org's settings: get, update, checkSecret. */
  readonly org: CurrentOrg;
  /** The audit log: list (the org's), listPlatform (admin token). */
  readonly auditLog: AuditLog;
  /** The org's event catalog and its AsyncAPI document. */
  readonly eventTypes: EventTypes;
  /** What the customer portal shows. */
  readonly portal: Portal;
  /** Transformations: templates, test (a run on a sample; nothing is sent). */
  readonly transformations: Transformations;

  private readonly settings: TransportSettings;
  private readonly options: PosternOptions;

  constructor(options: PosternOptions) {
    this.settings = checkedSettings(options);
    this.options = { ...options };
    const call: Call = (spec) => request(this.settings, spec);
    this.call = call;
    this.events = new Events(call);
    this.endpoints = new Endpoints(call);
    const lines: LinesCall = (spec) => requestLines(this.settings, spec);
    this.deliveries = new Deliveries(call, lines, (query, opts) => liveStream(this.settings, query, opts));
    this.apiKeys = new ApiKeys(call);
    this.platformKeys = new PlatformKeys(call);
    this.orgs = new Orgs(call);
    this.policies = new Policies(call);
    this.notifications = new Notifications(call);
    this.org = new CurrentOrg(call);
    this.auditLog = new AuditLog(call);
    this.eventTypes = new EventTypes(call);
    this.portal = new Portal(call);
    this.transformations = new Transformations(call);
  }

  private readonly call: Call;

  /** The calling key: its org, scopes and kind (`api_key` or `platform_key`). */
  me(options: RequestOptions = {}): Promise<T.Me> {
    return this.call({ method: 'GET', path: '/v1/me', ...options });
  }

  /** Attempt counts for the org or one endpoint over the last hour (per minute) or day (per hour). */
  stats(query: T.StatsQuery = {}, options: RequestOptions = {}): Promise<T.Stats> {
    return this.call({ method: 'GET', path: '/v1/stats', query: { ...query }, ...options });
  }

  /** `/readyz`: whether ingest can reach Redis (a 503 answer is returned, not thrown). */
  async ready(options: RequestOptions = {}): Promise<T.Readiness> {
    const res = await this.settings.fetch(new URL('readyz', this.settings.baseUrl), { signal: options.signal });
    return (await res.json()) as T.Readiness;
  }

  /**
   * The same client acting for another org: with a platform key, a client whose calls name
   * `orgId`; the other settings are kept.
   *
   * @throws TypeError when this client has no platform key.
   */
  forOrg(orgId: string): Postern {
    if (this.options.platformKey === undefined) throw new TypeError('Postern: forOrg needs a client made with a platformKey');
    return new Postern({ ...this.options, orgId });
  }
}
