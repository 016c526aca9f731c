import { readFileSync } from 'node:fs';
import { clientTypesSource } from '../../scripts/client-types.js';

/**
 * Issue 15, item 2: the client's types are generated from the OpenAPI document (itself generated
 * from the zod schemas the API uses), so a schema change that is not regenerated fails here.
 */
test('packages/client/src/api-types.ts is what the current OpenAPI document generates (npm run generate:client-types)', () => {
  const onDisk = readFileSync(new URL('../../packages/client/src/api-types.ts', import.meta.url), 'utf8');
  expect(onDisk).toBe(clientTypesSource());
});
