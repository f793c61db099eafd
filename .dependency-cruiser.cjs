/**
 * Layering (docs/architecture.md): core <- media, gateway <- control-api <- bin (composition root).
 * media never imports gateway; nothing but bin, test and bench imports bin. Test helpers live
 * under test/ (bench may import them), never in the production folders.
 */
const productionFolders = '^(core|gateway|media|control-api|bin)/';
/** A file or folder name that says "test helper": *test-support*, *test-helper*, *fixture*, *fake*, *mock*. */
// A name segment (between / or -) of a path in a production folder, e.g. control-api/x/test-support.ts,
// gateway/sip/fixtures/a.ts, media/fake-rtp.ts (safe-regex forbids nested quantifiers, hence the shape).
const testHelperInProduction = '^(core|gateway|media|control-api|bin)(/|/.*[/-])(test-support|test-helpers?|fixtures?|fakes?|mocks?)([-./]|$)';

module.exports = {
  forbidden: [
    { name: 'core-is-the-kernel', severity: 'error', comment: 'core imports nothing of the platform',
      from: { path: '^core/' }, to: { path: '^(gateway|media|control-api|bin)/' } },
    { name: 'media-not-gateway', severity: 'error', comment: 'media talks to signalling only through core ports',
      from: { path: '^media/' }, to: { path: '^(gateway|control-api|bin)/' } },
    { name: 'gateway-not-business', severity: 'error', comment: 'gateway reaches business logic through core ports',
      from: { path: '^gateway/' }, to: { path: '^(control-api|media|bin)/' } },
    { name: 'control-api-not-root', severity: 'error', from: { path: '^control-api/' }, to: { path: '^bin/' } },
    // control-api stands on four floors (docs/architecture.md), each importing only the floors
    // below: platform (store, crypto, net, webhooks, llm clients, HTTP plumbing) < model (domain,
    // resources, tenants, the recipe schema and graph) < features (recipe runtime and blocks,
    // calls, campaigns, insights, reports, gateway adapters, providers) < api (routes, apply,
    // simulations, web calls, sandbox, the control app). A lower floor that must tell a higher one
    // something takes a hook (e.g. the call recorder's onConversationEnded).
    { name: 'platform-floor', severity: 'error', comment: 'platform imports no floor above it',
      from: { path: '^control-api/platform/' }, to: { path: '^control-api/(model|features|api)/' } },
    { name: 'model-floor', severity: 'error', comment: 'model imports only platform',
      from: { path: '^control-api/model/' }, to: { path: '^control-api/(features|api)/' } },
    { name: 'features-floor', severity: 'error', comment: 'features import only model and platform',
      from: { path: '^control-api/features/' }, to: { path: '^control-api/api/' } },
    { name: 'control-api-on-floors', severity: 'error', comment: 'every control-api module lives on one of the four floors',
      from: { path: '^control-api/', pathNot: '^control-api/(platform|model|features|api)/' }, to: {} },
    { name: 'control-api-on-floors-orphans', severity: 'error', comment: 'every control-api module lives on one of the four floors',
      from: { path: '^control-api/', pathNot: '^control-api/(platform|model|features|api)/', orphan: true }, to: {} },
    { name: 'no-production-imports-of-tests', severity: 'error',
      from: { path: '^(core|gateway|media|control-api|bin)/', pathNot: '\\.test\\.ts$' }, to: { path: '(^test/|\\.test\\.ts$)' } },
    // Test helpers live under test/ (STYLE.md): a helper-named module in a production folder is
    // caught when it imports anything, when anything imports it, or (orphan) when neither.
    { name: 'no-test-helpers-in-production-folders', severity: 'error',
      comment: 'test support, fixtures, fakes and mocks belong under test/',
      from: { path: testHelperInProduction }, to: {} },
    { name: 'no-imports-of-test-helpers-in-production-folders', severity: 'error',
      comment: 'test support, fixtures, fakes and mocks belong under test/',
      from: { path: productionFolders }, to: { path: testHelperInProduction } },
    { name: 'no-orphan-test-helpers-in-production-folders', severity: 'error',
      comment: 'test support, fixtures, fakes and mocks belong under test/',
      from: { path: testHelperInProduction, orphan: true }, to: {} },
    // The image installs production dependencies only (npm ci --omit=dev): production code that
    // needs a devDependency would start here and crash there.
    { name: 'no-dev-dependencies-in-production', severity: 'error',
      from: { path: productionFolders, pathNot: '\\.test\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] } },
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
    { name: 'not-to-unresolvable', severity: 'error', from: {}, to: { couldNotResolve: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^node_modules|^data|^coverage)' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json'] },
  },
};
