import {
  healthEffect,
  httpStatusCode,
  shouldTrip,
  type IdFactory,
  isRetried,
  parseRetryAfterMs,
  retryDelayMs,
  signatureHeader,
  validateEndpointUrl,
  isValidSecret,
} from '@postern/shared';
import type { DeliveryRecord, EndpointRecord, NotificationRecord, Store } from '@postern/store';
import type { Logger } from 'pino';
import { checkDestination, type LookupAll } from './destination-check.js';
import type { DeliveryTransport } from './http-transport.js';
import { NO_DELIVERY_OBSERVER, type DeliveryObserver } from './sender-metrics.js';

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
  /** Makes notification ids when a breaker trips. */
  ids: IdFactory;
  /** Tells the org's operations URL(s) about a trip (a signed operational webhook); optional. */
  announceTrip?: (notification: NotificationRecord) => Promise<unknown>;
  /** Told of attempts, finished deliveries and breaker trips (the sender's metrics); none by default. */
  metrics?: DeliveryObserver;
}

/**
 * The delivery and its endpoint as just read by the concurrency gate, so an attempt does not read
 * them again; the attempt's own Lua scripts re-check the delivery's status atomically.
 */
export interface Preloaded {
  delivery: DeliveryRecord;
  endpoint: EndpointRecord | null;
}

/**
 * What became of a delivery job:
 * - `done`: nothing more to do for this job (succeeded, ended, held, or nothing to act on);
 * - `retry`: the attempt failed and the next one is due after `delayMs`;
 * - `failed`: the delivery ended failed (attempts exhausted or a permanent error).
 */
export type DeliverOutcome =
  | { kind: 'done'; status: string }
  | { kind: 'retry'; delayMs: number; error: string }
  | { kind: 'failed'; error: string };

/**
 * Runs one attempt of a delivery, following DESIGN.md's data rules: the attempt is recorded as
 * started before its request is sent and completed after, so a crash in between re-runs the same
 * attempt (a duplicate is possible, a loss is not).
 *
 * Before any attempt the endpoint and org are re-read: a deleted endpoint cancels the delivery
 * (`endpoint_deleted`); a paused or disabled one, or a suspended org, cancels, holds or fails it as
 * the policy's `onEndpointInactive` says. A payload over the policy's `maxPayloadBytes` is never
 * sent (`payload_too_large`, seed 002).
 *
 * Throws only when Redis fails; the caller lets BullMQ retry the job, and the same attempt runs again.
 */
export async function deliver(deps: DeliverDeps, deliveryId: string, preloaded?: Preloaded): Promise<DeliverOutcome> {
  const { store, clock } = deps;
  const observer = deps.metrics ?? NO_DELIVERY_OBSERVER;
  const delivery = preloaded?.delivery ?? (await store.deliveries.get(deliveryId));
  if (!delivery) return { kind: 'done', status: 'missing' };
  if (isFinished(delivery)) return { kind: 'done', status: delivery.status };

  const endpoint = preloaded ? preloaded.endpoint : await store.endpoints.get(delivery.endpointId);
  if (!endpoint) {
    const status = await store.deliveries.settle(deliveryId, 'cancelled', 'endpoint_deleted', clock.now());
    if (status === 'cancelled') observer.deliveryFinished({ outcome: 'cancelled', error: 'endpoint_deleted' });
    return { kind: 'done', status: status ?? 'missing' };
  }
  const inactiveReason = await inactiveReasonOf(deps, endpoint);
  if (inactiveReason) {
    const action = endpoint.policy.onEndpointInactive;
    const outcome = action === 'cancel' ? 'cancelled' : action === 'fail' ? 'failed' : 'held';
    // Switched off by its breaker (seed 001): cancelled like the pending ones at the trip, so a bulk
    // redelivery takes it too. A trip sets disabledAt; a manual pause does not.
    const reason = outcome === 'cancelled' && inactiveReason === 'endpoint_inactive' && endpoint.disabledAt !== null ? 'breaker_tripped' : inactiveReason;
    const status = await store.deliveries.settle(deliveryId, outcome, reason, clock.now());
    if (status === 'cancelled' || status === 'failed') observer.deliveryFinished({ outcome: status, error: status === 'failed' ? inactiveReason : reason });
    if (outcome === 'held' && status === 'pending') {
      // A resume that raced this hold found the job still running and could not re-queue it:
      // if the endpoint is active again, run the delivery again right away instead of waiting.
      const now = await store.endpoints.get(endpoint.id);
      if (now?.status === 'active') return { kind: 'retry', delayMs: 0, error: 'endpoint_inactive' };
    }
    return outcome === 'failed' ? { kind: 'failed', error: inactiveReason } : { kind: 'done', status: status ?? 'missing' };
  }

  const envelope = await store.events.getEnvelope(delivery.eventId);
  const { maxPayloadBytes } = endpoint.policy;
  if (envelope !== null && maxPayloadBytes !== null && Buffer.byteLength(envelope) > maxPayloadBytes) {
    await store.deliveries.settle(deliveryId, 'failed', 'payload_too_large', clock.now());
    observer.deliveryFinished({ outcome: 'failed', error: 'payload_too_large' });
    return { kind: 'failed', error: 'payload_too_large' };
  }

  const begun = await store.deliveries.beginAttempt(deliveryId, clock.now());
  if (begun.kind === 'missing') return { kind: 'done', status: 'missing' };
  if (begun.kind === 'finished') return { kind: 'done', status: begun.status };
  const attemptNumber = begun.attemptNumber;
  const startedAt = clock.now();
  const log = deps.logger.child({ requestId: `${deliveryId}.${attemptNumber}`, endpointId: endpoint.id });

  observer.attemptStarted();
  let result: AttemptResult | undefined;
  try {
    result = await attempt(deps, delivery, endpoint, envelope, attemptNumber, startedAt);
  } finally {
    observer.attemptFinished({ durationMs: clock.now() - startedAt, error: result ? result.error : 'delivery_failed' });
  }
  const finishedAt = clock.now();
  const durationMs = Math.max(0, finishedAt - startedAt);
  const { policy } = endpoint;

  let nextStatus: 'succeeded' | 'pending' | 'failed';
  let nextAttemptAt: number | null = null;
  let delayMs = 0;
  if (result.error === null) {
    nextStatus = 'succeeded';
  } else {
    const retried = isRetried(result.error, policy, { isTestEvent: delivery.isTest });
    const next = retried ? retryDelayMs({ policy, failedAttemptNumber: attemptNumber, random: deps.random, retryAfterMs: result.retryAfterMs }) : null;
    if (next === null) {
      nextStatus = 'failed';
    } else {
      nextStatus = 'pending';
      delayMs = next;
      nextAttemptAt = finishedAt + next;
    }
  }
  const health = healthEffect({ policy, error: result.error, isTestEvent: delivery.isTest, deliveryFailed: nextStatus === 'failed' });
  const finished = await store.deliveries.finishAttempt({
    deliveryId,
    endpointId: endpoint.id,
    attemptNumber,
    nowMs: finishedAt,
    startedAt,
    nextStatus,
    responseStatus: result.responseStatus,
    error: result.error,
    durationMs,
    nextAttemptAt,
    health,
  });
  log.info({ attempt: attemptNumber, status: nextStatus, error: result.error, responseStatus: result.responseStatus, durationMs }, 'attempt finished');
  if (finished.kind === 'stale') return { kind: 'done', status: 'stale' };
  if (nextStatus === 'succeeded') observer.deliveryFinished({ outcome: 'succeeded', error: null, latencyMs: finishedAt - delivery.createdAt });
  else if (nextStatus === 'failed') observer.deliveryFinished({ outcome: 'failed', error: result.error });
  if (health === 'failure' && shouldTrip(policy.breaker, finished, finishedAt)) await tripBreaker(deps, endpoint, finished.consecutiveFailures, finishedAt);
  if (nextStatus === 'succeeded') return { kind: 'done', status: 'succeeded' };
  if (nextStatus === 'failed') return { kind: 'failed', error: result.error ?? 'delivery_failed' };
  return { kind: 'retry', delayMs, error: result.error ?? 'delivery_failed' };
}

interface AttemptResult {
  error: string | null;
  responseStatus: number | null;
  retryAfterMs: number | undefined;
}

async function attempt(
  deps: DeliverDeps,
  delivery: DeliveryRecord,
  endpoint: EndpointRecord,
  envelope: string | null,
  attemptNumber: number,
  startedAt: number,
): Promise<AttemptResult> {
  const fault = (error: string): AttemptResult => ({ error, responseStatus: null, retryAfterMs: undefined });
  // Postern's own faults (seed 004): retried on schedule, never counted against the endpoint.
  if (envelope === null) return fault('internal:event_missing');
  const parsed = validateEndpointUrl(endpoint.url);
  if (!parsed.ok) return fault('internal:stored_url_invalid');
  const secrets = endpoint.secrets.filter((s) => s.expiresAt === null || s.expiresAt > startedAt).map((s) => s.secret);
  if (secrets.length === 0 || !secrets.every(isValidSecret)) return fault('internal:secret_unreadable');

  const refused = await checkDestination(parsed.url, deps.classifyAddress, deps.lookupAll);
  if (refused) return fault(refused);

  const timestampS = Math.floor(startedAt / 1000);
  const result = await deps.transport.send({
    url: parsed.url.toString(),
    body: envelope,
    headers: {
      'content-type': 'application/json',
      'user-agent': deps.userAgent,
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(timestampS),
      'webhook-signature': signatureHeader({ secrets, msgId: delivery.eventId, timestampS, body: envelope }),
      'webhook-attempt': String(attemptNumber),
      'webhook-delivery-id': delivery.id,
      'webhook-request-id': `${delivery.id}.${attemptNumber}`,
    },
    timeout: endpoint.policy.timeout,
    redirects: endpoint.policy.redirects,
    maxResponseBytesRead: endpoint.policy.maxResponseBytesRead,
  });
  if (result.kind === 'error') return fault(result.code);
  if (result.status >= 200 && result.status < 300) return { error: null, responseStatus: result.status, retryAfterMs: undefined };
  const error = result.status >= 300 && result.status < 400 ? (endpoint.policy.redirects.follow ? httpStatusCode(result.status) : 'redirect_not_followed') : httpStatusCode(result.status);
  const retryAfterMs = result.status === 429 || result.status === 503 ? parseRetryAfterMs(result.retryAfter, deps.clock.now()) : undefined;
  return { error, responseStatus: result.status, retryAfterMs };
}

function isFinished(d: DeliveryRecord): boolean {
  return d.status === 'succeeded' || d.status === 'failed' || d.status === 'cancelled';
}

async function inactiveReasonOf(deps: DeliverDeps, endpoint: EndpointRecord): Promise<string | null> {
  const org = await deps.store.orgs.get(endpoint.orgId);
  if (org?.status === 'suspended') return 'org_suspended';
  if (endpoint.status !== 'active') return 'endpoint_inactive';
  return null;
}

/**
 * Switches the endpoint off as its breaker says (DESIGN.md breaker row): pause or disable, settle its
 * pending deliveries, and leave exactly one notification (the store trips only an active endpoint).
 */
async function tripBreaker(deps: DeliverDeps, endpoint: EndpointRecord, consecutiveFailures: number, nowMs: number): Promise<void> {
  const rule = endpoint.policy.breaker;
  if (!rule) return;
  const unit = rule.counts === 'deliveries' ? 'failed deliveries' : rule.of === '4xx' ? '4xx answers' : 'failed attempts';
  const notification = await deps.store.notifications.tripBreaker({
    endpoint,
    status: rule.action === 'pause' ? 'paused' : 'disabled',
    reason: `${consecutiveFailures} consecutive ${unit}`,
    pendingOnTrip: rule.pendingOnTrip,
    recreateRequired: rule.action === 'disable' && rule.reenable === 'recreate',
    consecutiveFailures,
    notificationId: deps.ids('ntf', nowMs),
    nowMs,
  });
  if (notification) {
    (deps.metrics ?? NO_DELIVERY_OBSERVER).breakerTripped(rule.action);
    deps.logger.warn({ endpointId: endpoint.id, kind: notification.kind, consecutiveFailures, deliveriesAffected: notification.deliveriesAffected }, 'breaker tripped');
    // The trip is recorded either way; a failure to queue the notice must not fail the attempt.
    await deps.announceTrip?.(notification).catch((err: Error) => deps.logger.warn({ err: err.message }, 'operational webhook not queued'));
  }
}
