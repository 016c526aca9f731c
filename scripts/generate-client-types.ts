/**
 * Writes `packages/client/src/api-types.ts`: the TypeScript types of `@postern/client`, generated
 * from the OpenAPI document ingest serves (`buildOpenApiDocument`), whose schemas are the zod
 * schemas the API validates requests with and builds answers from. Run after changing a schema:
 * `npm run generate:client-types`; a test fails while the file is out of date.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { clientTypesSource } from './client-types.js';

const target = fileURLToPath(new URL('../packages/client/src/api-types.ts', import.meta.url));
writeFileSync(target, clientTypesSource());
console.log(`wrote ${target}`);
