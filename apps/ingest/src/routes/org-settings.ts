import { DEFAULT_PORTAL_POLICIES, EVENT_VALIDATION_MODES, NO_PORTAL_BRANDING, checkAccentColour, disabledEventTypesSchema, generateSecret, portalBrandingSchema, portalPoliciesSchema } from '@postern/shared';
import type { OrgRecord } from '@postern/store';
import { Router } from 'express';
import { z } from 'zod';
import { invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireApiKeyCredential, requireScope } from '../auth.js';
import { iso } from '../serializers.js';
import { recordAudit } from '../audit.js';
import { checkUrl } from './endpoints.js';
import { checkSecretResponse, orgSettingsResponse, type Json } from '../response-schemas.js';

/**
 * `PATCH /v1/org` body: any subset of the org's settings; `null` clears the check URL, `[]` the
 * switches, `portalPolicies: null` restores the default. `portal` fields are merged into the stored
 * branding (a field set to null is cleared).
 */
export const updateOrgBody = z.strictObject({
  disabledEventTypes: disabledEventTypesSchema.optional(),
  preAttemptCheckUrl: z.string({ error: 'preAttemptCheckUrl must be a URL string or null' }).max(2048, 'preAttemptCheckUrl must be at most 2048 characters').nullable().optional(),
  eventValidation: z.enum(EVENT_VALIDATION_MODES, { error: 'eventValidation must be off, warn or reject' }).optional(),
  requireKnownEventTypes: z.boolean({ error: 'requireKnownEventTypes must be true or false' }).optional(),
  portal: portalBrandingSchema.optional(),
  portalPolicies: portalPoliciesSchema.nullable().optional(),
});

/** The org as `GET /v1/org` shows it: settings, never the check secret (see `GET /v1/org/check-secret`). */
export function orgJson(org: OrgRecord): Json<typeof orgSettingsResponse> {
  return {
    id: org.id,
    name: org.name,
    status: org.status,
    createdAt: iso(org.createdAt),
    disabledEventTypes: org.disabledEventTypes ?? [],
    preAttemptCheckUrl: org.preAttemptCheckUrl ?? null,
    eventValidation: org.eventValidation ?? 'off',
    requireKnownEventTypes: org.requireKnownEventTypes ?? false,
    portal: { ...NO_PORTAL_BRANDING, ...org.portal },
    portalPolicies: org.portalPolicies ?? DEFAULT_PORTAL_POLICIES,
  };
}

/** The org's settings as the audit log compares them (the check secret by value: only names are recorded). */
function orgAuditShape(org: OrgRecord): Record<string, unknown> {
  return {
    disabledEventTypes: org.disabledEventTypes ?? [],
    preAttemptCheckUrl: org.preAttemptCheckUrl ?? null,
    preAttemptCheckSecret: org.preAttemptCheckSecret ?? null,
    eventValidation: org.eventValidation ?? 'off',
    requireKnownEventTypes: org.requireKnownEventTypes ?? false,
    portal: org.portal ?? null,
    portalPolicies: org.portalPolicies ?? null,
  };
}

/**
 * The calling org's own settings (issue 16), behind API-key auth:
 * - `GET /v1/org` (`webhooks:read`): name, status, `disabledEventTypes`, `preAttemptCheckUrl`;
 * - `PATCH /v1/org` (`webhooks:write`): changes `disabledEventTypes` (exact types or `prefix.*`;
 *   deliveries of those types are cancelled before their next attempt with `event_type_disabled`,
 *   new events of them get no delivery; switching back on replays nothing) and
 *   `preAttemptCheckUrl` (checked like an endpoint URL; the first one set makes the org's check
 *   secret). 400 `invalid_request` / `unsafe_url` naming the field otherwise;
 * - `PATCH /v1/org` also sets the event catalog's rules (`eventValidation` off | warn | reject,
 *   `requireKnownEventTypes`) and the customer portal's `portal` branding (accent checked for WCAG
 *   AA: refused with 400 naming its ratio) and `portalPolicies` (what customers may pick);
 * - `GET /v1/org/check-secret` (`webhooks:write`): the secret that signs check requests, or null.
 */
export function orgSettingsRoutes(deps: AppDeps): Router {
  const router = Router();
  const current = async (orgId: string) => {
    const org = await deps.store.orgs.get(orgId);
    if (!org) throw notFound('org');
    return org;
  };
  router.get('/v1/org', requireScope('webhooks:read'), async (_req, res) => {
    res.json(orgJson(await current(res.locals.orgId as string)));
  });
  router.patch('/v1/org', requireApiKeyCredential, requireScope('webhooks:write'), async (req, res) => {
    const body = updateOrgBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const orgId = res.locals.orgId as string;
    const { disabledEventTypes, preAttemptCheckUrl, eventValidation, requireKnownEventTypes, portalPolicies } = body.data;
    const url = typeof preAttemptCheckUrl === 'string' ? checkUrl(preAttemptCheckUrl, deps.config.allowList, 'preAttemptCheckUrl') : preAttemptCheckUrl;
    // Made with the first URL, kept after: HSETNX in the store leaves an existing secret alone.
    const checkSecret = typeof url === 'string' ? generateSecret() : undefined;
    const before = await current(orgId);
    // Branding is merged: a PATCH naming only the colour keeps the name and logo. Colours are kept normalised (#rrggbb).
    let portal;
    if (body.data.portal !== undefined) {
      const stored = before.portal ?? NO_PORTAL_BRANDING;
      const accent = body.data.portal.accentColor;
      const accentColor = typeof accent === 'string' ? (checkAccentColour(accent) as { accent: string }).accent : accent;
      portal = { ...NO_PORTAL_BRANDING, ...stored, ...body.data.portal, ...(accentColor !== undefined ? { accentColor } : {}) };
    }
    await deps.store.orgs.updateSettings(orgId, { disabledEventTypes, preAttemptCheckUrl: url, checkSecret, eventValidation, requireKnownEventTypes, portal, portalPolicies });
    const after = await current(orgId);
    await recordAudit(deps, req, res, { action: 'org.settings_updated', target: { type: 'org', id: orgId }, before: orgAuditShape(before), after: orgAuditShape(after) });
    res.json(orgJson(after));
  });
  router.get('/v1/org/check-secret', requireApiKeyCredential, requireScope('webhooks:write'), async (_req, res) => {
    const org = await current(res.locals.orgId as string);
    res.json({ secret: org.preAttemptCheckSecret ?? null } satisfies Json<typeof checkSecretResponse>);
  });
  return router;
}
