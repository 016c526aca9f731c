import type { SandboxPool } from '@postern/sandbox';
import {
  classifyAddress,
  DEFAULT_EVENT_TYPE_FILTER,
  DEFAULT_SIGNATURE_SCHEME,
  generateSigningSecret,
  hostAddress,
  isValidSigningSecret,
  NO_REQUEST_SETTINGS,
  planPolicyChange,
  policyTimeline,
  resolvePolicy,
  signatureSchemeOf,
  validateEndpointUrl,
  type SignatureScheme,
} from '@postern/shared';
import { deliveryJobs, type EndpointRecord } from '@postern/store';
import type { Job } from 'bullmq';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { allowedPolicyInput } from '../customer-policy.js';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import { DEFAULT_MAX_ENDPOINTS_PER_ORG, type AppDeps } from '../app-deps.js';
import { endpointJson, signingJson } from '../serializers.js';
import { createEndpointBody, pageQuery, parseListQuery, rotateSecretBody, updateEndpointBody } from '../schemas.js';
import { requireEmptyBody } from '../empty-body.js';
import { resolveRequestSettings } from '../request-settings-input.js';
import { resolveTransformation } from '../transformation-input.js';
import { requireScope } from '../auth.js';
import { actionIdempotency } from '../action-idempotency.js';
import { ENDPOINT_DIFF, endpointAuditShape, recordAudit } from '../audit.js';
import { createdEndpointResponse, endpointSecretResponse, endpointTimelineResponse, resumedEndpointResponse, rotatedSecretResponse, updatedEndpointResponse, type Json } from '../response-schemas.js';

const URL_REASONS: Record<string, string> = {
  invalid_url: 'url must be an absolute http(s) URL',
  too_long: 'url must be at most 2048 characters',
  unsupported_scheme: 'url must use http or https',
  credentials_not_allowed: 'url must not contain a username or password',
  missing_host: 'url must name a host',
  invalid_port: 'url must not name port 0',
  control_characters: 'url must not contain control characters (tab, newline, …)',
  host_too_long: 'url must name a host of at most 253 characters',
  label_too_long: 'url must name a host whose labels (between dots) are at most 63 characters each',
};

/**
 * Checks an endpoint URL (or, with `field`, another URL Postern calls: the org's
 * `preAttemptCheckUrl`); literal private addresses are refused at once (host names per attempt).
 * Returns the URL as it will be stored; throws 400 naming `field` otherwise.
 */
export function checkUrl(raw: string, allowList: readonly string[], field = 'url'): string {
  const parsed = validateEndpointUrl(raw);
  if (!parsed.ok) throw new ApiError(400, 'invalid_request', `${field}: ${(URL_REASONS[parsed.reason] ?? 'invalid URL').replace(/^url/, field)}`);
  // What a receiver never sees, or what URL parsing would silently repair, is refused rather
  // than stored different from what was sent.
  if (parsed.url.hash !== '' || raw.includes('#')) throw new ApiError(400, 'invalid_request', `${field}: must not contain a fragment (#…): it is never sent to the receiver`);
  if (!new RegExp(`^${parsed.url.protocol}//[^/]`, 'i').test(raw.trim())) throw new ApiError(400, 'invalid_request', `${field}: must be written scheme://host…, e.g. https://example.com/webhooks`);
  const address = hostAddress(parsed.url);
  if (address) {
    const reason = classifyAddress(address, allowList);
    if (reason) throw new ApiError(400, 'unsafe_url', `${field}: points at a non-public address (${reason}); Postern only delivers to public addresses`);
  }
  return parsed.url.toString();
}

/** Resolves a policy as `POST /v1/endpoints` does; 400 `invalid_policy` naming the first problem. */
export function policyOrThrow(input: unknown) {
  const resolved = resolvePolicy(input);
  if (!resolved.ok) {
    const issue = resolved.issues[0];
    throw new ApiError(400, 'invalid_policy', `${issue?.path ?? 'policy'}: ${issue?.message ?? 'invalid'}`);
  }
  return resolved;
}

/** Loads an endpoint of the caller's org; 404 when absent or another org's. */
export async function ownEndpoint(deps: AppDeps, res: Response, id: string): Promise<EndpointRecord> {
  const endpoint = await deps.store.endpoints.get(res.locals.orgId as string, id);
  if (!endpoint || endpoint.orgId !== res.locals.orgId) throw notFound('endpoint');
  return endpoint;
}

/**
 * Sends an endpoint's held deliveries on their way again, oldest first (tourical and kestrel): a job still
 * waiting out a retry delay is promoted to run now, a delivery without a job gets one. Returns how
 * many were re-queued.
 */
async function requeueHeld(deps: AppDeps, endpoint: EndpointRecord): Promise<number> {
  const held = await deps.store.deliveries.listHeld(endpoint.orgId, endpoint.id, 10_000);
  await requeueDeliveries(deps, endpoint.orgId, held);
  return held.length;
}

/**
 * Puts deliveries `held` (ids of one org, oldest first) on their way now, in that order: a job
 * waiting out a delay is promoted, a delivery without a job gets one.
 */
async function requeueDeliveries(deps: AppDeps, orgId: string, held: readonly string[]): Promise<void> {
  const queue = deps.queues.forOrg(orgId);
  // Promoted and new jobs join the same FIFO wait list, so each goes in in held order: a run of
  // job-less deliveries is added before the next delayed job is promoted.
  let missing: string[] = [];
  const addMissing = async () => {
    if (missing.length === 0) return;
    await queue.addBulk(deliveryJobs(await deps.store.deliveries.getMany(orgId, missing)));
    missing = [];
  };
  for (const id of held) {
    const job = (await queue.getJob(id)) as Job | undefined;
    if (!job) missing.push(id);
    else if (await job.isDelayed()) {
      await addMissing();
      // Its delay may run out, or a sender finish it, between the look and the promote: then it
      // needs nothing from here, unless it is gone (a sender held it just before the resume), and
      // then it gets a new job like any held delivery without one.
      const promoted = await job.promote().then(
        () => true,
        () => false,
      );
      if (!promoted && !(await queue.getJob(id))) missing.push(id);
    }
  }
  await addMissing();
}

/**
 * Checks a secret a client brought against the endpoint's scheme; 400 `invalid_request` naming
 * `secret` and what it must be.
 */
function checkGivenSecret(secret: string, scheme: SignatureScheme): void {
  if (isValidSigningSecret(secret, scheme)) return;
  if (scheme === 'ed25519') {
    const hint = secret.startsWith('whpk_') ? ': whpk_ is the public key, Postern signs with the whsk_ secret key' : '';
    throw new ApiError(400, 'invalid_request', `secret: must be whsk_ followed by base64 of the 64-byte Ed25519 seed and public key for signatureScheme "ed25519"${hint}`);
  }
  throw new ApiError(400, 'invalid_request', 'secret: must be whsec_ followed by base64 of 24 to 64 bytes');
}

/** Validates `rotate-secret`'s optional body (`{signatureScheme?}`) before idempotency sees it; the result is in `res.locals.rotate`. */
function rotateSecretInput<Params>(req: Request<Params>, res: Response, next: NextFunction): void {
  const body = req.body as unknown;
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
    return next(new ApiError(400, 'invalid_request', 'body: must be empty, {} or {"signatureScheme": "hmac-sha256" | "ed25519"}'));
  }
  const parsed = rotateSecretBody.safeParse(body ?? {});
  if (!parsed.success) return next(invalidRequest(parsed.error));
  res.locals.rotate = parsed.data;
  next();
}

/** At most this many rotated-out secrets keep signing during their grace period. */
export const MAX_PREVIOUS_SECRETS = 2;

/** Endpoint CRUD, pause/resume, secret read and rotation (the actions take `Idempotency-Key`), policy timeline. Mounted behind API-key auth. */
export function endpointRoutes(deps: AppDeps & { sandbox: SandboxPool }): Router {
  const router = Router();

  router.post('/v1/endpoints', requireScope('webhooks:write'), async (req, res) => {
    const body = createEndpointBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const url = checkUrl(body.data.url, deps.config.allowList);
    const { policy, presetName, warnings } = policyOrThrow(allowedPolicyInput(res, body.data.policy, true) as typeof body.data.policy);
    // Checked before the write: two creations racing for the last place may both get it.
    const maxEndpoints = deps.config.maxEndpointsPerOrg ?? DEFAULT_MAX_ENDPOINTS_PER_ORG;
    if ((await deps.store.endpoints.count(res.locals.orgId as string)) >= maxEndpoints) {
      throw new ApiError(409, 'endpoint_limit_reached', `the org has ${maxEndpoints} endpoints, the most it may have (MAX_ENDPOINTS_PER_ORG); delete one first`);
    }
    const given = body.data.secret;
    // Unnamed, the scheme is the one the secret's prefix says (Standard Webhooks), else the default.
    const scheme = (body.data.signatureScheme as SignatureScheme | undefined) ?? (given === undefined ? null : signatureSchemeOf(given)) ?? DEFAULT_SIGNATURE_SCHEME;
    if (given !== undefined) checkGivenSecret(given, scheme);
    const secret = given ?? generateSigningSecret(scheme);
    const settings = resolveRequestSettings(body.data, null, { allowList: deps.config.allowList, checkUrl, targetUrl: url });
    const now = deps.clock.now();
    const resolved = await resolveTransformation(deps.sandbox, body.data.transformation, null, now);
    const transformation = resolved?.transformation;
    const endpoint: EndpointRecord = {
      id: deps.ids('ep', now),
      orgId: res.locals.orgId as string,
      url,
      description: body.data.description ?? '',
      eventTypes: body.data.eventTypes ?? [...DEFAULT_EVENT_TYPE_FILTER],
      policyName: presetName,
      policy,
      status: 'active',
      secrets: [{ secret, expiresAt: null }],
      createdAt: now,
      updatedAt: now,
      consecutiveFailures: 0,
      failureStreakStartedAt: null,
      lastSuccessAt: null,
      lastFailureAt: null,
      failedAttempts: 0,
      consecutiveFailedAttempts: 0,
      disabledAt: null,
      disabledReason: null,
      ...(settings ? { request: settings.request, requestSecrets: settings.requestSecrets } : {}),
      ...(transformation ? { transformation, lastTransformationVersion: transformation.version } : {}),
    };
    await deps.store.endpoints.create(endpoint);
    await recordAudit(deps, req, res, { action: 'endpoint.created', target: { type: 'endpoint', id: endpoint.id }, before: null, after: endpointAuditShape(endpoint), diff: ENDPOINT_DIFF });
    // The resolved policy is in the answer (`policy`), with what an override left surprising.
    res.status(201).json({ ...endpointJson(endpoint), secret, warnings } satisfies Json<typeof createdEndpointResponse>);
  });

  router.get('/v1/endpoints', requireScope('webhooks:read'), async (req, res) => {
    const page = await deps.store.endpoints.list(res.locals.orgId as string, parseListQuery(pageQuery, req.query, 'ep'));
    res.json({ data: page.items.map(endpointJson), nextCursor: page.nextCursor });
  });

  router.get('/v1/endpoints/:id', requireScope('webhooks:read'), async (req, res) => {
    res.json(endpointJson(await ownEndpoint(deps, res, req.params.id)));
  });

  router.get('/v1/endpoints/:id/secret', requireScope('webhooks:write'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const now = deps.clock.now();
    const current = endpoint.secrets.find((s) => s.expiresAt === null);
    res.json({ secret: current?.secret ?? null, ...signingJson(endpoint), previous: endpoint.secrets.filter((s) => s.expiresAt !== null && s.expiresAt > now).length } satisfies Json<typeof endpointSecretResponse>);
  });

  router.patch('/v1/endpoints/:id', requireScope('webhooks:write'), async (req, res) => {
    // No body is an empty patch; `null`, an array or a scalar is a mistake, not "change nothing".
    if (req.body !== undefined && (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body))) {
      throw new ApiError(400, 'invalid_request', 'body: must be a JSON object');
    }
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    if (req.body !== undefined && 'signatureScheme' in (req.body as object)) {
      throw new ApiError(400, 'invalid_request', 'signatureScheme: changing the scheme needs a new key: POST /v1/endpoints/:id/rotate-secret with {"signatureScheme": …}; the old key keeps signing through the grace period');
    }
    // policyName is what an answer says the policy came from; there is nothing to set, and null
    // resets nothing: say what does.
    if (req.body !== undefined && 'policyName' in (req.body as object)) {
      throw new ApiError(400, 'invalid_request', 'policyName: is read-only (the preset the policy came from, null for a custom one); to change the policy send policy: a preset name such as "standard" (the default) or a policy object');
    }
    if (req.body !== undefined && (req.body as { policy?: unknown }).policy === null) {
      throw new ApiError(400, 'invalid_policy', 'policy: null does not reset the policy; send a preset name such as "standard" (the default) or a policy object');
    }
    const body = updateEndpointBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const patch: Parameters<typeof deps.store.endpoints.update>[1] = {};
    let warnings: string[] = [];
    if (body.data.url !== undefined) patch.url = checkUrl(body.data.url, deps.config.allowList);
    if (body.data.eventTypes !== undefined) patch.eventTypes = body.data.eventTypes;
    if (body.data.description !== undefined) patch.description = body.data.description;
    const settings = resolveRequestSettings(body.data, { request: endpoint.request ?? NO_REQUEST_SETTINGS, requestSecrets: endpoint.requestSecrets ?? {} }, { allowList: deps.config.allowList, checkUrl, targetUrl: patch.url ?? endpoint.url });
    if (settings) {
      patch.request = settings.request;
      patch.requestSecrets = settings.requestSecrets;
    }
    const transformation = await resolveTransformation(deps.sandbox, body.data.transformation, endpoint, deps.clock.now());
    if (transformation !== undefined) {
      patch.transformation = transformation.transformation;
      patch.lastTransformationVersion = transformation.lastVersion;
    }
    if (body.data.policy !== undefined) {
      const resolved = policyOrThrow(allowedPolicyInput(res, body.data.policy, false) as typeof body.data.policy);
      patch.policy = resolved.policy;
      patch.policyName = resolved.presetName;
      warnings = resolved.warnings;
    }
    const updated = await deps.store.endpoints.update(endpoint, patch, deps.clock.now());
    if (!updated) throw notFound('endpoint');
    await recordAudit(deps, req, res, { action: 'endpoint.updated', target: { type: 'endpoint', id: updated.id }, before: endpointAuditShape(endpoint), after: endpointAuditShape(updated), diff: ENDPOINT_DIFF });
    // Deliveries already waiting look again under the new limits now, not at their next look.
    const change = planPolicyChange(endpoint.policy, updated.policy);
    if (change) {
      const { concurrency } = updated.policy;
      const woken = await deps.store.leases.recall({ orgId: updated.orgId, endpointId: updated.id, ...concurrency, nowMs: deps.clock.now(), releaseKeyLines: change.releaseKeyLines, resetRate: change.resetRate });
      await deps.queues.wake(updated.orgId, woken);
    }
    res.json({ ...endpointJson(updated), warnings } satisfies Json<typeof updatedEndpointResponse>);
  });

  router.delete('/v1/endpoints/:id', requireScope('webhooks:write'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    // Deliveries held while it was paused or disabled, and those waiting out a retry delay or a
    // limit, have no attempt coming soon: once it is gone their jobs run now, so each ends
    // `cancelled` with `endpoint_deleted` (planBeforeAttempt) at once rather than when its wait
    // runs out. Past 10,000 of either, the rest end so when their jobs come due.
    const held = await deps.store.deliveries.listHeld(endpoint.orgId, endpoint.id, 10_000);
    const waiting = await deps.store.deliveries.listPending(endpoint.orgId, endpoint.id, 10_000);
    await deps.store.endpoints.delete(endpoint);
    await requeueDeliveries(deps, endpoint.orgId, held);
    // A job that is not delayed (queued, running) is left as it is; it finds the endpoint gone.
    await deps.queues.wake(endpoint.orgId, waiting);
    await recordAudit(deps, req, res, { action: 'endpoint.deleted', target: { type: 'endpoint', id: endpoint.id } });
    res.status(204).end();
  });

  router.post('/v1/endpoints/:id/pause', requireScope('webhooks:write'), requireEmptyBody, actionIdempotency(deps, 'pause'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    if (endpoint.status === 'disabled') {
      // Pausing would turn a breaker's `disabled` into a `paused` that resume re-enables. The
      // reason says which rule disabled it (a failure streak, or a 410 Gone under `goneDisables`).
      const why = endpoint.disabledReason ? ` (${endpoint.disabledReason})` : '';
      throw new ApiError(409, 'endpoint_disabled', `the endpoint is disabled${why}; resume it (or re-create it, if its policy says so) instead of pausing`);
    }
    const updated = await deps.store.endpoints.update(endpoint, { status: 'paused' }, deps.clock.now());
    if (!updated) throw notFound('endpoint');
    await recordAudit(deps, req, res, { action: 'endpoint.paused', target: { type: 'endpoint', id: updated.id }, before: endpointAuditShape(endpoint), after: endpointAuditShape(updated), diff: ENDPOINT_DIFF });
    res.json(endpointJson(updated));
  });

  router.post('/v1/endpoints/:id/resume', requireScope('webhooks:write'), requireEmptyBody, actionIdempotency(deps, 'resume'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    // The flag is set at the trip, so changing the policy afterwards does not open a way back.
    if (endpoint.recreateRequired || (endpoint.status === 'disabled' && endpoint.policy.breaker?.reenable === 'recreate')) {
      throw new ApiError(409, 'recreate_required', 'this policy does not re-enable a disabled endpoint: delete it and create it again (a new secret is issued)');
    }
    const updated = await deps.store.endpoints.update(
      endpoint,
      { status: 'active', disabledAt: null, disabledReason: null, consecutiveFailures: 0, failureStreakStartedAt: null },
      deps.clock.now(),
    );
    if (!updated) throw notFound('endpoint');
    await recordAudit(deps, req, res, { action: 'endpoint.resumed', target: { type: 'endpoint', id: updated.id }, before: endpointAuditShape(endpoint), after: endpointAuditShape(updated), diff: ENDPOINT_DIFF });
    const held = await requeueHeld(deps, updated);
    res.json({ ...endpointJson(updated), requeued: held } satisfies Json<typeof resumedEndpointResponse>);
  });

  router.post('/v1/endpoints/:id/rotate-secret', requireScope('webhooks:write'), rotateSecretInput, actionIdempotency(deps, 'rotate-secret'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const now = deps.clock.now();
    // A new key of the scheme asked for, else of the current one; the old keys, whatever their
    // scheme, keep signing through the grace period, so a switch breaks no receiver either.
    const scheme = ((res.locals.rotate as { signatureScheme?: SignatureScheme }).signatureScheme ?? signingJson(endpoint).signatureScheme);
    const secret = generateSigningSecret(scheme);
    // Newest first; only the latest few previous secrets keep signing, so repeated rotations
    // cannot grow the signature header without bound.
    const kept = endpoint.secrets
      .filter((s) => s.expiresAt === null || s.expiresAt > now)
      .map((s) => ({ secret: s.secret, expiresAt: s.expiresAt ?? now + deps.config.secretRotationGraceMs }))
      .slice(0, MAX_PREVIOUS_SECRETS);
    const secrets = [{ secret, expiresAt: null }, ...kept];
    await deps.store.endpoints.update(endpoint, { secrets }, now);
    await recordAudit(deps, req, res, { action: 'endpoint.secret_rotated', target: { type: 'endpoint', id: endpoint.id }, changes: ['signingSecrets'] });
    res.json({ secret, ...signingJson({ secrets }), previousSecretValidUntil: new Date(now + deps.config.secretRotationGraceMs).toISOString() } satisfies Json<typeof rotatedSecretResponse>);
  });

  // The endpoint's own policy, preset or custom, so the dashboard never re-implements schedule maths.
  router.get('/v1/endpoints/:id/timeline', requireScope('webhooks:read'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    res.json({ endpointId: endpoint.id, policyName: endpoint.policyName, attempts: policyTimeline(endpoint.policy) } satisfies Json<typeof endpointTimelineResponse>);
  });

  return router;
}
