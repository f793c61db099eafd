/**
 * Layering (docs/architecture.md): core <- media, gateway <- control-api <- bin (composition root).
 * media never imports gateway; nothing but bin, test and bench imports bin.
 */
module.exports = {
  forbidden: [
    { name: 'core-is-the-kernel', severity: 'error', comment: 'core imports nothing of the platform',
      from: { path: '^core/' }, to: { path: '^(gateway|media|control-api|bin)/' } },
    { name: 'media-not-gateway', severity: 'error', comment: 'media talks to signalling only through core ports',
      from: { path: '^media/' }, to: { path: '^(gateway|control-api|bin)/' } },
    { name: 'gateway-not-business', severity: 'error', comment: 'gateway reaches business logic through core ports',
      from: { path: '^gateway/' }, to: { path: '^(control-api|media|bin)/' } },
    { name: 'control-api-not-root', severity: 'error', from: { path: '^control-api/' }, to: { path: '^bin/' } },
    { name: 'no-production-imports-of-tests', severity: 'error',
      from: { path: '^(core|gateway|media|control-api|bin)/', pathNot: '\\.test\\.ts$' }, to: { path: '(^test/|\\.test\\.ts$)' } },
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
