import { readdirSync, readFileSync } from 'node:fs';
import * as shared from './index.js';

/**
 * Names `@postern/shared` exports as its public contract although no other workspace's code uses
 * them yet: the Standard Webhooks signing surface a receiver or tool needs (secrets, signing,
 * verification, tolerance), id helpers, the error-code table README is checked against, the
 * schedule and error rules the attempt plans are built from (documented per preset), and the
 * limits and lists that document the API's rules.
 */
const PUBLIC_CONTRACT = new Set([
  'ID_PREFIXES', 'isId', 'newId',
  'DEFAULT_TOLERANCE_S', 'InvalidSecretError', 'MAX_SECRET_BYTES', 'MIN_SECRET_BYTES', 'SECRET_PREFIX', 'parseSecret', 'sign', 'verify',
  'DEFAULT_SIGNATURE_SCHEME', 'ED25519_PUBLIC_KEY_BYTES', 'ED25519_PUBLIC_KEY_PREFIX', 'ED25519_SECRET_BYTES', 'ED25519_SECRET_PREFIX',
  'generateEd25519Secret', 'generateSecret', 'isValidSecret', 'parsePublicKey', 'parseSigningSecret', 'signWithKey',
  'ERROR_CODES', 'countsAgainstEndpoint', 'isRetried', 'httpStatusCode', 'retryDelayMs', 'parseRetryAfterMs',
  'MAX_ATTEMPTS', 'MAX_WAIT_MS', 'MAX_URL_LENGTH', 'parseAllowList',
  'ALL_EVENT_TYPES', 'MAX_EVENT_TYPE_FILTER_ENTRIES', 'MAX_EVENT_TYPE_LENGTH',
  'LOG_REDACT_CENSOR', 'LOG_REDACT_PATHS',
  'RETRIED_TRANSFORMATION_FAILURES', 'TRANSFORMATION_FAILURES', 'MAX_TRANSFORMED_BODY_BYTES', 'MAX_TRANSFORMED_HEADERS', 'TRANSFORMED_BODY_EXCERPT_BYTES', 'TRANSFORM_METHODS',
  'AUDIT_ACTOR_KINDS', 'changedFields', 'isAuditAction',
]);

/** The TypeScript source (tests excluded) of the workspaces that depend on this package (the CLI included). */
function dependentSources(): string {
  const roots = ['../../store/src/', '../../sandbox/src/', '../../cli/src/', '../../../apps/ingest/src/', '../../../apps/sender/src/', '../../../apps/ingest/src/routes/'];
  return roots
    .flatMap((root) => {
      const dir = new URL(root, import.meta.url);
      return readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).map((f) => readFileSync(new URL(f, dir), 'utf8'));
    })
    .join('\n');
}

describe('package entry point', () => {
  it('exports every name in the shared contract', () => {
    const contract = [
      'newId', 'createIdFactory', 'isId',
      'buildEnvelope', 'extractRawField',
      'generateSecret', 'parseSecret', 'InvalidSecretError', 'isValidSecret', 'sign', 'signatureHeader', 'verify',
      'SIGNATURE_SCHEMES', 'generateSigningSecret', 'parseSigningSecret', 'isValidSigningSecret', 'publicKeyOf', 'parsePublicKey', 'signWithKey', 'createSigningKeyCache',
      'ERROR_CODES', 'errorFamily', 'isRetried', 'countsAgainstEndpoint', 'httpStatusCode', 'isValidErrorCode',
      'policySchema', 'PRESET_NAMES', 'PRESETS', 'resolvePolicy',
      'retryDelayMs', 'parseRetryAfterMs', 'policyTimeline',
      'validateEndpointUrl', 'classifyAddress', 'parseAllowList',
      'eventTypeSchema', 'matchesEventTypes',
    ];
    for (const name of contract) expect(shared).toHaveProperty(name);
  });

  it('exports nothing that only tests use: each name is used by another workspace or is public contract', () => {
    const sources = dependentSources();
    const unused = Object.keys(shared).filter((name) => !PUBLIC_CONTRACT.has(name) && !new RegExp(`\\b${name}\\b`).test(sources));
    expect(unused).toEqual([]);
    for (const gone of ['RETRY_AFTER_STATUSES', 'parsePolicy', 'presetSummary', 'errorCodeWithDetail', 'waitBoundsMs', 'idTimeMs']) expect(shared).not.toHaveProperty(gone);
  });

  it('re-exports by name only', () => {
    const source = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/export \*/);
  });
});
