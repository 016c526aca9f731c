import {
  DEFAULT_CHECK_TIMEOUT_MS,
  planAttemptBody,
  shouldAskCheck,
  type AttemptBodyPlan,
  type CheckPlan,
  effectiveLimits,
  fullPace,
  isTurnStale,
  isValidSecret,
  nextPace,
  paceSignalOf,
  keepsResponse,
  outcomeOfResponse,
  webhookRequestHeaders,
  type SentRequestFields,
  planAfterAttempt,
  planBeforeAttempt,
  planBreakerTrip,
  planGoneTrip,
  addedRequestHeaders,
  proxyForRequest,
  shownRequestHeaders,
  NO_REQUEST_SETTINGS,
  signatureHeader,
  TRANSFORMATION_CANCEL_REASON,
  transformedRequestRecord,
  validateEndpointUrl,
  type AttemptOutcome,
  type BreakerTripPlan,
  type Pace,
  type IdFactory,
  type SigningKeyCache,
} from '@postern/shared';
import type { AttemptIds, AttemptResponseRecord, DeliveryRecord, EndpointRecord, FinishInput, FinishResult, NotificationRecord, StatsFlusher, Store } from '@postern/store';
import type { Logger } from 'pino';
import { SpanKind, SpanStatusCode, contextFromTraceparent, type Span, type Tracer } from '@postern/telemetry';
import { checkDestination, type LookupAll } from './destination-check.js';
import type { DeliveryTransport } from './http-transport.js';
import { DELETED_ENDPOINT_RETENTION_DAYS } from './janitor.js';
import { askPreAttemptCheck } from './pre-attempt-check.js';
import type { OauthTokens } from './oauth-tokens.js';
import { attemptAuth } from './request-auth.js';
import { NO_DELIVERY_OBSERVER, type DeliveryObserver } from './sender-metrics.js';
import { NO_TRANSFORM, transformStage, type TransformStage } from './transform-stage.js';
import type { SandboxPool } from '@postern/sandbox';

/** Everything one attempt needs; built once per sender by `createSender`. */
export interface DeliverDeps {
  store: Store;
  transport: DeliveryTransport;
  clock: { now(): number };
  /** Uniform in [0, 1); injected so jittered schedules are testable. */
  random: () => number;
  logger: Logger;
  /** Names why an address is refused (null = allowed), with the configured allow-list applied. */
  classifyAddress: (address: string) => string | null;
  lookupAll?: LookupAll;
  userAgent: string;
  /**
   * Endpoint secrets parsed once per sender (an Ed25519 `whsk_` key becomes a KeyObject on first
   * use, not per attempt); `createSigningKeyCache()` from `@postern/shared`.
   */
  signingKeys: SigningKeyCache;
  /** Makes notification ids when a breaker trips. */
  ids: IdFactory;
  /** Wakes parked deliveries that a freed slot lets in (promotes their delayed jobs). */
  wake: (orgId: string, deliveryIds: readonly string[]) => Promise<void>;
  /** Tells the org's operations URL(s) about a trip (a signed operational webhook); optional. */
  announceTrip?: (notification: NotificationRecord) => Promise<unknown>;
  /** Told of attempts, finished deliveries and breaker trips (the sender's metrics); none by default. */
  metrics?: DeliveryObserver;
  /** The org's pre-attempt check must answer within this, ms (`PRE_ATTEMPT_CHECK_TIMEOUT_MS`); default 3000. */
  checkTimeoutMs?: number;
  /** OAuth 2.0 tokens of endpoints with `oauth2_client_credentials` auth (shared through Redis); absent = such endpoints fail `auth_failed:secret_missing`. */
  oauthTokens?: OauthTokens;
  /** The global egress proxy (`EGRESS_PROXY_URL`) and the hosts that bypass it (`EGRESS_PROXY_BYPASS`); absent = none. */
  egress?: { proxyUrl: string | null; bypass: readonly string[] };
  /** Makes one span per attempt when tracing is on; absent = no span, no cost. */
  tracer?: Tracer;
  /** Runs endpoints' transformations (`createSandboxPool`); absent = an endpoint with one switched on fails `transformation_failed:error`. */
  sandbox?: SandboxPool;
  /**
   * Counts each finished attempt for the overview and renews the live feed's expiry after a finish
   * (`StatsFlusher`: written about once a second, not inside the finish).
   */
  stats: Pick<StatsFlusher, 'countAttempt' | 'feedAppended'>;
  /** Told when an attempt holds a concurrency slot and when it gives it back (for shutdown). */
  slots?: { taken(ids: AttemptIds, concurrency: EndpointRecord['policy']['concurrency']): void; returned(deliveryId: string): void };
}

/**
 * What the job of a delivery does next:
 * - `done`: nothing more (succeeded, ended, held, or nothing to act on); the job completes;
 * - `retry`: the next attempt is due at `nextAttemptAt` (epoch ms); the job waits, delayed, till then;
 * - `parked`: no concurrency slot now (or not its turn in the endpoint's line); the job waits to be
 *   woken by a release; `ordering_key`: to be woken when the delivery before it in its ordering
 *   key's line ends; `pace`: until `retryAt` (rate limit, or the endpoint paused by adaptive pacing).
 */
export type AttemptRun =
  | { kind: 'done'; status: string }
  | { kind: 'retry'; nextAttemptAt: number }
  | { kind: 'parked'; limit: 'endpoint'; ahead: number }
  | { kind: 'parked'; limit: 'org' | 'event_claim' }
  | { kind: 'parked'; limit: 'ordering_key'; keyLine: string }
  | { kind: 'parked'; limit: 'pace'; retryAt: number };

/**
 * Runs one attempt of a delivery as a pipeline: claim → decide → send → finish (docs/architecture.md).
 *
 * 1. **claim** (one Redis call): reads the delivery, its endpoint, the org and the envelope, takes
 *    the concurrency lease (or parks) and records the attempt as begun before any byte is sent.
 * 2. **decide**: `planBeforeAttempt` settles a delivery that must not be sent (endpoint gone or
 *    inactive, org suspended, event type switched off, payload too large) as its policy says;
 *    where the policy asks for it, the org's pre-attempt check says send (with this endpoint's
 *    body, frozen at the first send), cancel, or fails (`internal:check_…`, retried).
 * 3. **transform**: the endpoint's transformation, if switched on, reshapes the request in its
 *    sandbox (`transform-stage.ts`), drops the delivery (`transformation:cancel`) or fails the
 *    attempt (`transformation_failed:<reason>`, nothing sent, never held against the endpoint).
 * 4. **send**: the signed request, through the transport.
 * 5. **finish** (one Redis call): `planAfterAttempt`'s outcome recorded with the endpoint's health,
 *    the lease given back; the attempt counted for the overview in memory (`deps.stats` writes the
 *    counts about once a second); then `planBreakerTrip` may switch the endpoint off.
 *
 * A crash between 1 and 5 re-runs the same attempt number (a duplicate is possible, a loss is not).
 * Throws only when Redis fails or a late request of a rate-limited endpoint gets no new turn in
 * time; the caller retries the job and the same attempt runs again.
 */
export async function runAttempt(deps: DeliverDeps, ids: AttemptIds, traceparent?: string): Promise<AttemptRun> {
  const { store, clock } = deps;
  const observer = deps.metrics ?? NO_DELIVERY_OBSERVER;
  // The attempt starts when it is claimed: the time its slot and its rate-limit turn were taken at.
  const claimedAt = clock.now();
  const claim = await store.attempts.claim(ids, claimedAt);
  switch (claim.kind) {
    case 'missing':
      return { kind: 'done', status: 'missing' };
    case 'parked':
      return claim;
    case 'not_due':
      // Its job was run early (a stale wake-up): it waits again, no attempt spent.
      return { kind: 'retry', nextAttemptAt: claim.nextAttemptAt };
    case 'finished':
      await deps.wake(ids.orgId, claim.woken);
      return { kind: 'done', status: claim.status };
    case 'blocked': {
      await deps.wake(ids.orgId, claim.woken);
      return settleBlocked(deps, ids, claim);
    }
    case 'claimed':
      break;
  }
  const { delivery, endpoint, envelope, attemptNumber } = claim;
  const { policy } = endpoint;
  deps.slots?.taken(ids, policy.concurrency);

  const body = await bodyOfAttempt(deps, claim, claimedAt);
  if (body.kind === 'cancel') return cancelByCheck(deps, ids, claim, body.cancelReason, claimedAt);
  // The attempt starts when it is claimed (its slot and rate-limit turn were taken then), or, when
  // the org has a pre-attempt check, once the check has answered.
  const startedAt = claim.org.check ? clock.now() : claimedAt;
  observer.attemptStarted({ attemptNumber, sinceAcceptedMs: startedAt - delivery.createdAt });
  const span = deps.tracer ? startAttemptSpan(deps.tracer, ids, attemptNumber, traceparent) : null;
  let result: SendResult | undefined;
  let transformed: TransformStage = NO_TRANSFORM;
  try {
    if (body.kind === 'send' && body.envelope !== null) transformed = await transformStage(deps, endpoint, body.envelope, startedAt, `${ids.deliveryId}.${attemptNumber}`);
    if (transformed.kind === 'cancel') result = { error: null, responseStatus: null, request: null, response: null };
    else if (body.kind === 'unsent') result = { error: body.error, responseStatus: null, request: null, response: null };
    else if (transformed.kind === 'failed') result = { error: transformed.error, responseStatus: null, request: null, response: null };
    else result = await send(deps, ids, delivery, endpoint, body.envelope, attemptNumber, startedAt, claimedAt, transformed.kind === 'send' ? transformed : null);
  } finally {
    const endedAt = clock.now();
    observer.attemptFinished({ durationMs: endedAt - startedAt, error: result ? result.error : 'delivery_failed', orgId: ids.orgId, endpointId: ids.endpointId, nowMs: endedAt });
    if (span) endAttemptSpan(span, result);
  }
  if (transformed.kind === 'cancel') return cancelByCheck(deps, ids, claim, TRANSFORMATION_CANCEL_REASON, claimedAt, transformed.version);

  const finishedAt = clock.now();
  const plan = planAfterAttempt({ policy, attemptNumber, isTestEvent: delivery.isTest, outcome: result, nowMs: finishedAt, random: deps.random });
  const claimedUnder = endpoint.pace ?? null;
  const signal = paceSignalOf(result);
  const pace = nextPace(claimedUnder, { signal, retryAfterMs: result.retryAfterMs, startedAt }, finishedAt, policy);
  // A cut is the one that records this answer's time; a slow-down the last cut accounts for only extends a pause.
  const cut = signal === 'slow-down' && pace?.cutAt === finishedAt;
  const durationMs = Math.max(0, finishedAt - startedAt);
  // A 410 Gone may disable the endpoint at once (`goneDisables`): before this attempt gives its
  // slot back, so no delivery waiting for the slot is sent to a receiver that said it is gone.
  const gone = planGoneTrip(policy, result.error);
  if (gone) await tripBreaker(deps, endpoint, gone, endpoint.consecutiveFailures + 1, finishedAt);
  const finished = await finishAttempt(deps, {
    ids,
    attemptNumber,
    nowMs: finishedAt,
    startedAt,
    nextStatus: plan.next.status,
    responseStatus: result.responseStatus,
    error: result.error,
    durationMs,
    nextAttemptAt: plan.next.status === 'pending' ? plan.next.nextAttemptAt : null,
    health: plan.health,
    request: result.request,
    response: result.response,
    ...(transformed.kind !== 'none' ? { transformationVersion: transformed.version } : {}),
    concurrency: policy.concurrency,
    retention: policy.retention,
    ...(pace !== undefined ? { pace: { next: pace, claimedUnder, slowDown: signal === 'slow-down' } } : {}),
  });
  // A slow-down computed from a pace that changed since the claim is computed again from the pace
  // now stored (one cut halves the pace in force, never a stale one twice), a few times at most.
  let paceSet = pace;
  let paceCut = cut;
  for (let now: Pace | null | undefined = finished.paceNow, tries = 0; now !== undefined && tries < PACE_SET_TRIES; tries++) {
    const again = nextPace(now, { signal, retryAfterMs: result.retryAfterMs, startedAt }, finishedAt, policy);
    paceSet = again;
    paceCut = again?.cutAt === finishedAt;
    if (again === undefined) break;
    now = await store.endpoints.setPace(ids.orgId, ids.endpointId, now, again);
  }
  if (paceSet !== undefined) observer.paceChanged({ endpointId: ids.endpointId, pace: paceSet ?? fullPace(policy), cut: paceCut });
  deps.slots?.returned(ids.deliveryId);
  deps.logger.info(
    {
      requestId: `${ids.deliveryId}.${attemptNumber}`,
      endpointId: ids.endpointId,
      attempt: attemptNumber,
      status: plan.next.status,
      error: result.error,
      responseStatus: result.responseStatus,
      durationMs,
      ...(delivery.orderingKey !== undefined ? { orderingKey: delivery.orderingKey, sequence: delivery.sequence ?? null } : {}),
    },
    'attempt finished',
  );
  await deps.wake(ids.orgId, finished.woken);
  if (finished.kind === 'stale') return { kind: 'done', status: 'stale' };

  if (plan.next.status === 'succeeded') observer.deliveryFinished({ outcome: 'succeeded', error: null, latencyMs: finishedAt - delivery.createdAt });
  else if (plan.next.status === 'failed') observer.deliveryFinished({ outcome: 'failed', error: result.error });
  const trip = gone ? null : planBreakerTrip(policy, plan.health, finished, finishedAt);
  if (trip) await tripBreaker(deps, endpoint, trip, finished.consecutiveFailures, finishedAt);
  return plan.next.status === 'pending' ? { kind: 'retry', nextAttemptAt: plan.next.nextAttemptAt } : { kind: 'done', status: plan.next.status };
}

/**
 * The finish stage's one Redis call, and what it leaves to the sender's stats flusher: the
 * attempt's count in the overview (once recorded: not when stale) and the live feed's expiry
 * (renewed even when the call failed, as it may have appended before the connection broke).
 */
async function finishAttempt(deps: DeliverDeps, input: FinishInput): Promise<FinishResult> {
  try {
    const finished = await deps.store.attempts.finish(input);
    if (finished.kind === 'ok') deps.stats.countAttempt({ orgId: input.ids.orgId, endpointId: input.ids.endpointId, nextStatus: input.nextStatus, error: input.error, nowMs: input.nowMs });
    return finished;
  } finally {
    deps.stats.feedAppended(input.ids.orgId);
  }
}

type Claimed = Extract<Awaited<ReturnType<Store['attempts']['claim']>>, { kind: 'claimed' }>;

/** The check stage of an attempt: asks the org's check URL only when the policy and org call for it. */
async function bodyOfAttempt(deps: DeliverDeps, claim: Claimed, nowMs: number): Promise<AttemptBodyPlan> {
  const { delivery, endpoint, envelope, org, attemptNumber } = claim;
  const frozenEnvelope = delivery.frozenEnvelope;
  let check: CheckPlan | null = null;
  if (org.check && shouldAskCheck({ mode: endpoint.policy.preAttemptCheck, checkUrl: org.check.url, hasFrozenEnvelope: frozenEnvelope !== undefined })) {
    check = await askPreAttemptCheck({ ...deps, checkTimeoutMs: deps.checkTimeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS }, { check: org.check, delivery, attemptNumber, envelope, nowMs });
    deps.metrics?.checkFinished?.({ result: check.kind, error: check.kind === 'fault' ? check.error : null, durationMs: deps.clock.now() - nowMs });
    if (check.kind === 'fault') deps.logger.warn({ requestId: `${delivery.id}.${attemptNumber}`, endpointId: endpoint.id, error: check.error }, 'pre-attempt check failed');
  }
  const plan = planAttemptBody({ check, frozenEnvelope, envelope, maxPayloadBytes: endpoint.policy.maxPayloadBytes });
  if (plan.kind !== 'send' || !plan.freeze || plan.envelope === null) return plan;
  // A re-run of this attempt (its sender died) finds the body frozen by the first run and keeps it.
  const kept = await deps.store.deliveries.freezeEnvelope(delivery.orgId, delivery.id, plan.envelope);
  return { ...plan, envelope: kept ?? plan.envelope };
}

/**
 * Ends a claimed delivery that the org's check (or the endpoint's transformation, with its
 * `transformationVersion`) cancelled: nothing sent, health untouched, slot given back.
 */
async function cancelByCheck(deps: DeliverDeps, ids: AttemptIds, claim: Claimed, cancelReason: string, startedAt: number, transformationVersion?: number): Promise<AttemptRun> {
  const { policy } = claim.endpoint;
  const nowMs = deps.clock.now();
  const finished = await finishAttempt(deps, {
    ids,
    attemptNumber: claim.attemptNumber,
    nowMs,
    startedAt,
    nextStatus: 'cancelled',
    cancelReason,
    responseStatus: null,
    error: null,
    durationMs: Math.max(0, nowMs - startedAt),
    nextAttemptAt: null,
    health: 'none',
    request: null,
    response: null,
    ...(transformationVersion !== undefined ? { transformationVersion } : {}),
    concurrency: policy.concurrency,
    retention: policy.retention,
  });
  deps.slots?.returned(ids.deliveryId);
  deps.logger.info({ requestId: `${ids.deliveryId}.${claim.attemptNumber}`, endpointId: ids.endpointId, attempt: claim.attemptNumber, status: 'cancelled', cancelReason }, transformationVersion !== undefined ? 'attempt cancelled by the transformation' : 'attempt cancelled by the pre-attempt check');
  await deps.wake(ids.orgId, finished.woken);
  if (finished.kind === 'stale') return { kind: 'done', status: 'stale' };
  (deps.metrics ?? NO_DELIVERY_OBSERVER).deliveryFinished({ outcome: 'cancelled', error: cancelReason });
  return { kind: 'done', status: 'cancelled' };
}

/** How long a delivery the claim refused, but the rules would send, waits before it looks again, ms. */
const BLOCKED_RECHECK_MS = 1_000;

/** Carries out `planBeforeAttempt` for a delivery the claim did not begin. */
async function settleBlocked(deps: DeliverDeps, ids: AttemptIds, claim: Extract<Awaited<ReturnType<Store['attempts']['claim']>>, { kind: 'blocked' }>): Promise<AttemptRun> {
  const { store, clock } = deps;
  const plan = planBeforeAttempt(claim);
  // The claim found something in the way that the rules do not (a record it could not read as
  // written): look again shortly rather than at once, so such a delivery never spins.
  if (plan.kind === 'send') return { kind: 'retry', nextAttemptAt: clock.now() + BLOCKED_RECHECK_MS };
  // A deleted endpoint's policy is gone with it: its deliveries keep the `standard` log window.
  const retention = claim.endpoint?.policy.retention ?? { days: DELETED_ENDPOINT_RETENTION_DAYS };
  const settled = await store.attempts.settle(ids, plan.outcome, plan.reason, clock.now(), retention);
  const status = settled?.status ?? null;
  if (settled) await deps.wake(ids.orgId, settled.woken);
  if (status === 'cancelled' || status === 'failed') {
    (deps.metrics ?? NO_DELIVERY_OBSERVER).deliveryFinished({ outcome: status, error: plan.reason });
  }
  if (plan.outcome === 'held' && status === 'pending') {
    // A resume that raced this hold found the job still running and could not re-queue it:
    // if the endpoint is active again, run the delivery again right away instead of waiting.
    const now = await store.endpoints.get(ids.orgId, ids.endpointId);
    if (now?.status === 'active') return { kind: 'retry', nextAttemptAt: clock.now() };
  }
  return { kind: 'done', status: status ?? 'missing' };
}

/**
 * How the request went: the outcome the rules need, and what is recorded with the attempt — the
 * status, the headers sent (null when nothing was sent) and what the policy keeps of the answer.
 */
type SendResult = AttemptOutcome & { responseStatus: number | null; request: SentRequestFields | null; response: AttemptResponseRecord | null };

/**
 * Sends the signed request. Faults found before it (Postern's own: the event or a readable secret
 * missing; custral… vestiarion all retry those without charging the endpoint) and an unsafe
 * destination are outcomes like any failed request, never exceptions.
 */
async function send(
  deps: DeliverDeps,
  ids: AttemptIds,
  delivery: DeliveryRecord,
  endpoint: EndpointRecord,
  envelope: string | null,
  attemptNumber: number,
  startedAt: number,
  turnAt: number,
  transformed: Extract<TransformStage, { kind: 'send' }> | null,
): Promise<SendResult> {
  const fault = (error: string, request: SentRequestFields | null = null): SendResult => ({ error, responseStatus: null, request, response: null });
  if (envelope === null) return fault('internal:event_missing');
  const parsed = validateEndpointUrl(endpoint.url);
  if (!parsed.ok) return fault('internal:stored_url_invalid');
  // A transformation may send elsewhere: that URL passes the same address check as the endpoint's
  // own, here and at connect time; refused, it is the transformation's failure.
  const target = transformed && transformed.request.url !== parsed.url.toString() ? validateEndpointUrl(transformed.request.url) : parsed;
  if (!target.ok) return fault('transformation_failed:bad_result');
  const body = transformed ? transformed.request.body : envelope;
  const secrets = endpoint.secrets.filter((s) => s.expiresAt === null || s.expiresAt > startedAt).map((s) => s.secret);
  if (secrets.length === 0 || !secrets.every((secret) => readableSecret(deps.signingKeys, secret))) return fault('internal:secret_unreadable');

  const refused = await checkDestination(target.url, deps.classifyAddress, deps.lookupAll);
  if (refused) return fault(target === parsed ? refused : 'transformation_failed:unsafe_url');

  const settings = endpoint.request ?? NO_REQUEST_SETTINGS;
  const requestSecrets = endpoint.requestSecrets ?? {};
  const authIds = { orgId: ids.orgId, endpointId: ids.endpointId };
  const auth = await attemptAuth(deps.oauthTokens, authIds, settings, requestSecrets);
  // A secret Postern cannot read is its own fault (never held against the endpoint), like a signing secret.
  if (auth.kind === 'failed') return fault(auth.reason === 'secret_missing' ? 'internal:secret_unreadable' : `auth_failed:${auth.reason}`);

  const timestampS = Math.floor(startedAt / 1000);
  const signed: SentRequestFields = {
    userAgent: deps.userAgent,
    timestampS,
    // Over the bytes actually sent: the transformed body where there is one.
    signature: signatureHeader({ secrets, msgId: delivery.eventId, timestampS, body, keyOf: deps.signingKeys.get }),
    ...(delivery.orderingKey !== undefined ? { orderingKey: delivery.orderingKey } : {}),
    ...(delivery.sequence !== undefined ? { sequence: delivery.sequence } : {}),
    ...(transformed ? { transformed: transformedRequestRecord(transformed.version, transformed.request) } : {}),
  };
  const transformHeaders = transformed?.request.headers ?? {};
  const webhookHeaders = webhookRequestHeaders({ eventId: delivery.eventId, deliveryId: delivery.id, attemptNumber }, signed);
  // The log keeps the endpoint's own headers as shown (secrets and authorization as ••••), never their values.
  const shown = shownRequestHeaders(settings);
  const sent: SentRequestFields = Object.keys(shown).length > 0 ? { ...signed, addedHeaders: shown } : signed;
  await keepRateTurn(deps, ids, endpoint, turnAt);
  const request = {
    url: target.url.toString(),
    ...(transformed ? { method: transformed.request.method } : {}),
    body,
    // A transformation's headers come last (as the log shows them); they never name a `webhook-*` header.
    headers: { ...webhookHeaders, ...addedRequestHeaders(settings, requestSecrets, auth.authorization), ...transformHeaders },
    timeout: endpoint.policy.timeout,
    redirects: endpoint.policy.redirects,
    maxResponseBytesRead: endpoint.policy.maxResponseBytesRead,
    keepResponseBody: endpoint.policy.keepResponseBody ?? 'failed',
    proxyUrl: proxyForRequest({ targetHost: target.url.hostname, endpointProxy: settings.proxy, proxyPassword: requestSecrets.proxyPassword, globalProxyUrl: deps.egress?.proxyUrl ?? null, bypass: deps.egress?.bypass ?? [] }),
    clientCertificate: auth.clientCertificate,
    originOnlyHeaders: [...settings.headers.map((h) => h.name), ...(auth.authorization !== null ? ['authorization'] : []), ...Object.keys(transformHeaders)],
  };
  let result = await deps.transport.send(request);
  if (result.kind === 'response' && result.status === 401 && auth.oauth && !auth.oauth.fetched) {
    // The receiver refused a cached token (revoked, or expired early): one new token, and the
    // same attempt sent again under the same number.
    const renewed = await attemptAuth(deps.oauthTokens, authIds, settings, requestSecrets, auth.oauth.stored);
    // No new token: the attempt fails on its auth, with the receiver's 401 as its answer.
    if (renewed.kind === 'failed') return { error: `auth_failed:${renewed.reason}`, responseStatus: 401, request: sent, response: null };
    result = await deps.transport.send({ ...request, headers: { ...webhookHeaders, ...addedRequestHeaders(settings, requestSecrets, renewed.authorization), ...transformHeaders } });
  }
  if (result.kind === 'error') return fault(result.code, sent);
  const outcome = outcomeOfResponse(result.status, result.retryAfter, endpoint.policy, deps.clock.now());
  // The transport judged `failed` by status (non-2xx); the attempt's outcome has the last word.
  const response = result.detail && keepsResponse(endpoint.policy.keepResponseBody, outcome.error) ? result.detail : null;
  return { ...outcome, responseStatus: result.status, request: sent, response };
}

/** How often a slow-down's pace is computed again when other attempts keep changing it meanwhile. */
const PACE_SET_TRIES = 3;

/**
 * How long a late request waits for a new rate-limit turn at most, ms; then its attempt is
 * interrupted (thrown, like a Redis fault) and runs again shortly with the same number.
 */
const RATE_TURN_MAX_WAIT_MS = 5_000;

/**
 * The rate limit holds where requests are sent, not only where turns are taken: a request of a
 * rate-limited endpoint about to leave later after its claim's turn than its rate allows
 * (`allowedLatenessMs`: 20 ms at 20/s, about 9 s at 0.1/s; a pre-attempt check, a busy process)
 * takes a new turn first, waiting for one while it holds its slot (`rate-limit.ts`), and leaves as
 * soon as it has one. A turn it was given is never judged stale again: on a machine so busy that a
 * round trip to Redis takes longer than the allowed lateness, asking again would burn every turn
 * and send nothing. Throws when no turn comes within {@link RATE_TURN_MAX_WAIT_MS}.
 */
async function keepRateTurn(deps: DeliverDeps, ids: AttemptIds, endpoint: EndpointRecord, turnAt: number): Promise<void> {
  const { rate } = effectiveLimits(endpoint.policy, endpoint.pace ?? null, turnAt);
  if (!rate || !isTurnStale(turnAt, deps.clock.now(), rate)) return;
  const giveUpAt = deps.clock.now() + RATE_TURN_MAX_WAIT_MS;
  for (;;) {
    const now = deps.clock.now();
    const retryAt = await deps.store.attempts.takeRateTurn(ids, rate, now);
    if (retryAt === null) return;
    if (deps.clock.now() >= giveUpAt) throw new Error('no rate-limit turn for a late request in time');
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(retryAt, giveUpAt) - deps.clock.now())));
  }
}

/**
 * Whether a stored secret (`whsec_` or `whsk_`) can sign; parsing it warms the cache the signature
 * then reads. Any refusal (an `InvalidSecretError`, or a key the crypto library will not take) is
 * Postern's fault, recorded as `internal:secret_unreadable`, never an exception out of the attempt.
 */
function readableSecret(keys: SigningKeyCache, secret: string): boolean {
  try {
    keys.get(secret);
    return true;
  } catch {
    return false;
  }
}

/** Carries out a breaker trip: the endpoint switched off once, its pending deliveries settled, one notification. */
async function tripBreaker(deps: DeliverDeps, endpoint: EndpointRecord, trip: BreakerTripPlan, consecutiveFailures: number, nowMs: number): Promise<void> {
  const notification = await deps.store.notifications.tripBreaker({
    endpoint,
    status: trip.status,
    reason: trip.reason,
    pendingOnTrip: trip.pendingOnTrip,
    retention: endpoint.policy.retention,
    recreateRequired: trip.recreateRequired,
    consecutiveFailures,
    notificationId: deps.ids('ntf', nowMs),
    nowMs,
  });
  if (!notification) return;
  (deps.metrics ?? NO_DELIVERY_OBSERVER).breakerTripped(trip.status === 'paused' ? 'pause' : 'disable');
  deps.logger.warn({ endpointId: endpoint.id, kind: notification.kind, consecutiveFailures, deliveriesAffected: notification.deliveriesAffected }, 'breaker tripped');
  // The trip is recorded either way; a failure to queue the notice must not fail the attempt.
  await deps.announceTrip?.(notification).catch((err: Error) => deps.logger.warn({ err: err.message }, 'operational webhook not queued'));
}

/**
 * The span of one attempt, a child of the span that accepted the event (its `traceparent` came
 * with the job): ids and the attempt number only, never the URL, the payload or a secret.
 */
function startAttemptSpan(tracer: Tracer, ids: AttemptIds, attemptNumber: number, traceparent: string | undefined): Span {
  return tracer.startSpan(
    'postern attempt',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'postern.org.id': ids.orgId,
        'postern.endpoint.id': ids.endpointId,
        'postern.delivery.id': ids.deliveryId,
        'postern.event.id': ids.eventId,
        'postern.attempt.number': attemptNumber,
      },
    },
    contextFromTraceparent(traceparent),
  );
}

/** Ends an attempt's span with its outcome: the HTTP status (when one came back) and the error code. */
function endAttemptSpan(span: Span, result: SendResult | undefined): void {
  const error = result ? result.error : 'delivery_failed';
  if (result?.responseStatus != null) span.setAttribute('http.response.status_code', result.responseStatus);
  if (error) {
    span.setAttribute('postern.error.code', error);
    span.setAttribute('error.type', error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  }
  span.end();
}
