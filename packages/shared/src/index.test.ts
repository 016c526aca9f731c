import { readFileSync } from 'node:fs';
import * as shared from './index.js';

describe('package entry point', () => {
  it('exports every name in the shared contract', () => {
    const contract = [
      'newId', 'createIdFactory', 'isId',
      'buildEnvelope', 'extractRawField',
      'generateSecret', 'parseSecret', 'InvalidSecretError', 'isValidSecret', 'sign', 'signatureHeader', 'verify',
      'ERROR_CODES', 'errorFamily', 'isRetried', 'countsAgainstEndpoint', 'httpStatusCode', 'isValidErrorCode',
      'policySchema', 'PRESET_NAMES', 'PRESETS', 'resolvePolicy',
      'retryDelayMs', 'parseRetryAfterMs', 'policyTimeline',
      'validateEndpointUrl', 'classifyAddress', 'parseAllowList',
      'eventTypeSchema', 'matchesEventTypes',
    ];
    for (const name of contract) expect(shared).toHaveProperty(name);
  });

  it('re-exports by name only', () => {
    const source = readFileSync(new URL('./index.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/export \*/);
  });
});
