// `node --import ./test/helpers/production-only/register.mjs dist/bin/platform.js` runs the built
// platform as the image does, where only production dependencies are installed: any import of a
// devDependency (tsx, typescript, mocha...) or of a TypeScript file fails as it would there.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
