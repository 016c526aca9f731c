// Part of `npm run build`: copies Redoc's standalone bundle (and its licence notices) next to the
// compiled code, where `/docs/api` finds it; production images install no devDependencies.
import { copyFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const bundle = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
mkdirSync('dist/vendor', { recursive: true });
copyFileSync(bundle, 'dist/vendor/redoc.standalone.js');
copyFileSync(`${bundle}.LICENSE.txt`, 'dist/vendor/redoc.standalone.js.LICENSE.txt');
