import { z } from 'zod';
import { checkAccentColour } from './contrast.js';
import { isPrintableText, notPrintableMessage } from './printable-text.js';
import { PRESET_NAMES, type Policy } from './policy.js';
import { policyTimeline } from './retry-schedule.js';

/**
 * The customer portal's rules (pure): which policy choices an org lets its customers make
 * (`portalPolicies`), its branding (`portal`), and the plain-words labels customer mode shows in
 * place of preset ids, breaker streaks and JSON.
 */

/** Policy fields a customer may be allowed to set on top of a preset: the attempt count and the timeout. */
export const PORTAL_POLICY_FIELDS = ['maxAttempts', 'timeoutMs'] as const;
/** One of {@link PORTAL_POLICY_FIELDS}. */
export type PortalPolicyField = (typeof PORTAL_POLICY_FIELDS)[number];

/** What customers may pick in the portal: presets (≥ 1) and extra fields. */
export interface PortalPolicies {
  presets: string[];
  fields: PortalPolicyField[];
}

/** The choices of an org that set none: the `standard` preset only, no extra fields. */
export const DEFAULT_PORTAL_POLICIES: PortalPolicies = { presets: ['standard'], fields: [] };

/** `portalPolicies` in `PATCH /v1/org`: presets from {@link PRESET_NAMES}, fields from {@link PORTAL_POLICY_FIELDS}, no repeats. */
export const portalPoliciesSchema = z.strictObject({
  presets: z
    .array(z.enum(PRESET_NAMES as unknown as [string, ...string[]], { error: `must be one of ${PRESET_NAMES.join(', ')}` }))
    .min(1, 'presets must name at least one preset')
    .refine((a) => new Set(a).size === a.length, 'presets must not repeat'),
  fields: z
    .array(z.enum(PORTAL_POLICY_FIELDS, { error: `must be one of ${PORTAL_POLICY_FIELDS.join(', ')}` }))
    .refine((a) => new Set(a).size === a.length, 'fields must not repeat')
    .default([]),
});

const https = (name: string) =>
  z
    .string({ error: `${name} must be an https URL` })
    .max(2048, `${name} must be at most 2048 characters`)
    .refine((v) => {
      try {
        return new URL(v).protocol === 'https:';
      } catch {
        return false;
      }
    }, `${name} must be an https URL`);

/**
 * `portal` in `PATCH /v1/org`: what the portal shows instead of "Postern" and the org id. Each
 * field may be null (cleared). `accentColor` must reach WCAG AA on the white page
 * ({@link checkAccentColour}); a lighter one is refused, naming its ratio.
 */
export const portalBrandingSchema = z.strictObject({
  displayName: z.string({ error: 'displayName must be a string of 1 to 80 characters' }).refine((v) => isPrintableText(v), notPrintableMessage('displayName')).trim().min(1, 'displayName must be a string of 1 to 80 characters').max(80, 'displayName must be a string of 1 to 80 characters').nullable().optional(),
  logoUrl: https('logoUrl').nullable().optional(),
  accentColor: z
    .string({ error: 'accentColor must be a #rgb or #rrggbb colour' })
    .superRefine((v, ctx) => {
      const check = checkAccentColour(v);
      if (!check.ok) ctx.addIssue({ code: 'custom', message: check.reason });
    })
    .nullable()
    .optional(),
  supportUrl: https('supportUrl').nullable().optional(),
});

/** An org's portal branding as stored; null fields fall back to neutral defaults (no Postern name). */
export interface PortalBranding {
  displayName: string | null;
  logoUrl: string | null;
  accentColor: string | null;
  supportUrl: string | null;
}

/** Branding of an org that set none. */
export const NO_PORTAL_BRANDING: PortalBranding = { displayName: null, logoUrl: null, accentColor: null, supportUrl: null };

/** A span in words, rounded to the unit that fits: `45 seconds`, `10 minutes`, `5 hours`, `3 days`. */
export function spanInWords(ms: number): string {
  const plural = (n: number, unit: string) => `${n} ${unit}${n === 1 ? '' : 's'}`;
  if (ms < 90_000) return plural(Math.max(1, Math.round(ms / 1000)), 'second');
  if (ms < 90 * 60_000) return plural(Math.round(ms / 60_000), 'minute');
  if (ms < 36 * 3_600_000) return plural(Math.round(ms / 3_600_000), 'hour');
  return plural(Math.round(ms / 86_400_000), 'day');
}

/**
 * How long a policy keeps trying, for people: `Retries for up to 3 days (8 attempts)`, or
 * `No retries` for one attempt. From the policy's timeline: the latest start of the last attempt.
 */
export function retryLabel(policy: Pick<Policy, 'maxAttempts'> & Policy): string {
  if (policy.maxAttempts <= 1) return 'No retries';
  const last = policyTimeline(policy).at(-1)!;
  return `Retries for up to ${spanInWords(last.latestMs)} (${policy.maxAttempts} attempts)`;
}

/** What a policy does to an endpoint that keeps failing, in words. */
export function breakerLabel(policy: Policy): string {
  const rule = policy.breaker;
  if (rule === null) return 'Never switched off automatically';
  return rule.action === 'pause' ? 'Paused after repeated failures' : rule.reenable === 'recreate' ? 'Switched off after repeated failures; then it must be re-created' : 'Switched off after repeated failures';
}

/** A policy choice as customer mode offers it: the retries, then what repeated failures do. */
export function policyChoiceLabel(policy: Policy): string {
  return `${retryLabel(policy)} · ${breakerLabel(policy)}`;
}

/** An endpoint as {@link endpointStatusSummary} needs it. Times are epoch ms. */
export interface EndpointStateInput {
  status: 'active' | 'paused' | 'disabled';
  disabledAt: number | null;
  /** Set by a breaker trip or a 410 (`20 consecutive failed attempts`, `the endpoint answered 410 Gone`); null for a pause by hand. */
  disabledReason: string | null;
  recreateRequired?: boolean;
  policy: Pick<Policy, 'breaker' | 'onEndpointInactive'>;
  /** Deliveries held for this endpoint until it is back (null = not counted). */
  heldCount: number | null;
}

/** An action the API accepts on an endpoint in its state. */
export type EndpointAction = 'pause' | 'resume' | 'recreate' | 'send_test';

/** What customer mode says about an endpoint: a headline, since when, what waits, what can be done. */
export interface EndpointStatusSummary {
  tone: 'ok' | 'warn' | 'error';
  /** `Receiving deliveries`, `Paused by hand`, `Paused after repeated failures`, `Switched off: the URL answered 410 Gone`. */
  headline: string;
  /** When it stopped receiving (epoch ms), or null. */
  since: number | null;
  /** Deliveries waiting for it to come back, or null when not counted. */
  waiting: number | null;
  /** What happens to new events meanwhile, in words; null while active. */
  meanwhile: string | null;
  /** The actions the API accepts now, in the order to offer them ({@link endpointActions}). */
  actions: EndpointAction[];
}

/**
 * The actions the API would accept on an endpoint now: an active one can be paused or sent a test
 * event; a paused one resumed; a disabled one resumed, unless its breaker says re-enable by
 * re-creating (then only `recreate`: resume answers 409 `recreate_required`).
 */
export function endpointActions(e: Pick<EndpointStateInput, 'status' | 'recreateRequired' | 'policy'>): EndpointAction[] {
  if (e.status === 'active') return ['pause', 'send_test'];
  if (e.status === 'disabled' && (e.recreateRequired === true || e.policy.breaker?.reenable === 'recreate')) return ['recreate'];
  return ['resume'];
}

/**
 * Customer mode's account of an endpoint's state (pure): why it is not receiving, since when,
 * how many deliveries wait for it, and what can be done — without breaker counts or policy ids.
 */
export function endpointStatusSummary(e: EndpointStateInput): EndpointStatusSummary {
  const actions = endpointActions(e);
  if (e.status === 'active') return { tone: 'ok', headline: 'Receiving deliveries', since: null, waiting: e.heldCount, meanwhile: null, actions };
  const gone = e.disabledReason !== null && /410/.test(e.disabledReason);
  const byBreaker = e.disabledReason !== null && !gone;
  const headline =
    e.status === 'paused'
      ? byBreaker
        ? 'Paused after repeated failures'
        : 'Paused'
      : gone
        ? 'Switched off: the URL answered 410 Gone'
        : byBreaker
          ? 'Switched off after repeated failures'
          : 'Switched off';
  const meanwhile = { hold: 'New deliveries wait and are sent when it is back.', cancel: 'New deliveries are cancelled until it is back.', fail: 'New deliveries fail until it is back.' }[e.policy.onEndpointInactive];
  return { tone: e.status === 'paused' ? 'warn' : 'error', headline, since: e.disabledAt, waiting: e.heldCount, meanwhile, actions };
}

/** Whether a portal customer's `policy` input stays within the org's `portalPolicies`; the reason when not. */
export function checkPortalPolicyInput(input: unknown, allowed: PortalPolicies): { ok: true } | { ok: false; reason: string } {
  const presets = allowed.presets.join(', ');
  if (typeof input === 'string') return allowed.presets.includes(input) ? { ok: true } : { ok: false, reason: `policy: this portal offers ${presets}` };
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { ok: false, reason: `policy: this portal offers ${presets}` };
  const { preset, ...rest } = input as Record<string, unknown>;
  if (typeof preset !== 'string' || !allowed.presets.includes(preset)) return { ok: false, reason: `policy.preset: this portal offers ${presets}` };
  for (const name of Object.keys(rest)) {
    const field: PortalPolicyField | null = name === 'maxAttempts' ? 'maxAttempts' : name === 'timeout' ? 'timeoutMs' : null;
    if (field === null || !allowed.fields.includes(field)) return { ok: false, reason: `policy.${name}: this portal does not let customers change it` };
  }
  return { ok: true };
}
