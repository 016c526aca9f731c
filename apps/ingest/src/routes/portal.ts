import { DEFAULT_PORTAL_POLICIES, NO_PORTAL_BRANDING, PRESETS, checkAccentColour, endpointStatusSummary, policyChoiceLabel, type PresetName } from '@postern/shared';
import type { OrgRecord } from '@postern/store';
import { Router, type Response } from 'express';
import type { AppDeps } from '../app-deps.js';
import { requireScope, type PortalSessionCredential } from '../auth.js';
import { endpointSummaryResponse, portalResponse, type Json } from '../response-schemas.js';
import { iso } from '../serializers.js';
import { ownEndpoint } from './endpoints.js';

/** Whether the request came from a portal session in customer mode (the default for portal sessions). */
export function isCustomerMode(res: Response): boolean {
  return (res.locals.portalSession as PortalSessionCredential | null | undefined)?.mode === 'customer';
}

/**
 * What the customer portal needs beyond the v1 resources, behind API-key auth (`webhooks:read`):
 * - `GET /v1/portal` → `{mode, branding, policies, fields}`: the org's branding (with the text
 *   colour on its accent), and the policy choices its customers may pick, in plain words;
 * - `GET /v1/endpoints/:id/summary` → the endpoint in words (state, since when, how many deliveries
 *   wait, the actions the API accepts now) and its last 24 h: success rate and hourly counts.
 */
export function portalRoutes(deps: AppDeps): Router {
  const router = Router();

  router.get('/v1/portal', requireScope('webhooks:read'), async (_req, res) => {
    const org = (res.locals.org as OrgRecord | undefined) ?? (await deps.store.orgs.get(res.locals.orgId as string));
    const branding = { ...NO_PORTAL_BRANDING, ...org?.portal };
    const accent = branding.accentColor ? checkAccentColour(branding.accentColor) : null;
    const allowed = org?.portalPolicies ?? DEFAULT_PORTAL_POLICIES;
    res.json({
      mode: isCustomerMode(res) ? 'customer' : 'operator',
      branding: { ...branding, accentText: accent?.ok ? accent.onAccent : null },
      policies: allowed.presets.filter((name) => name in PRESETS).map((name) => ({ name, label: policyChoiceLabel(PRESETS[name as PresetName].policy) })),
      fields: allowed.fields,
    } satisfies Json<typeof portalResponse>);
  });

  router.get('/v1/endpoints/:id/summary', requireScope('webhooks:read'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const now = deps.clock.now();
    const [heldCount, series] = await Promise.all([deps.store.deliveries.countHeld(endpoint.orgId, endpoint.id), deps.store.stats.read(endpoint.orgId, 'endpoint', endpoint.id, 'day', now)]);
    const state = endpointStatusSummary({ ...endpoint, heldCount });
    const succeeded = series.buckets.reduce((n, b) => n + b.succeeded, 0);
    const attempts = series.buckets.reduce((n, b) => n + b.succeeded + b.failed, 0);
    res.json({
      endpointId: endpoint.id,
      policyLabel: policyChoiceLabel(endpoint.policy),
      state: { ...state, since: iso(state.since) },
      last24h: { attempts, succeeded, successRate: attempts === 0 ? null : succeeded / attempts, hourly: series.buckets.map((b) => ({ startAt: iso(b.startMs)!, succeeded: b.succeeded, failed: b.failed })) },
    } satisfies Json<typeof endpointSummaryResponse>);
  });

  return router;
}
