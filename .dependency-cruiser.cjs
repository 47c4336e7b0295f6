/**
 * The layering (docs/architecture.md, "Layers"), checked by `npm run check:layers`, which `npm test` runs first.
 *
 *   libs/domain                 pure: imports only itself (and node:crypto's hashing)
 *   port libs                   libs/{config,eventstore,persistence,search,embeddings,ingestion,connectors,network}: ports,
 *                               adapters, configuration; never a read model, a runtime lib or an app
 *   projections/                read models, their queries, the search-index projection; never a runtime lib or an app
 *   runtime libs                libs/{indexing,webhooks,processors,connector-sync,platform}: what runs on the read models, and the
 *                               composition (libs/platform); never an app
 *   apps/api, apps/worker, apps/cli: each imports libs/ and projections/, never another app
 *
 * Tests (*.spec.ts, *.e2e.ts, *.int.ts, test/, bench/) are not checked: they reach across layers to set up what they
 * test (decider specs use test/support, the projection runner's spec runs a real projection, e2e tests drive apps).
 */
const PORT_LIBS = '^libs/(config|eventstore|persistence|search|embeddings|ingestion|connectors|network)/';
const RUNTIME_LIBS = '^libs/(indexing|webhooks|processors|connector-sync|platform)/';

module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment: 'libs/domain holds deciders, events and rules: it imports nothing outside itself (hashing from node:crypto aside).',
      severity: 'error',
      from: { path: '^libs/domain/' },
      to: { pathNot: ['^libs/domain/', '^(node:)?crypto$'] },
    },
    {
      name: 'port-libs-know-no-read-model',
      comment: 'Ports, adapters and configuration know no read model, runtime lib or app.',
      severity: 'error',
      from: { path: PORT_LIBS },
      to: { path: ['^projections/', RUNTIME_LIBS, '^apps/'] },
    },
    {
      name: 'projections-know-no-runtime-or-app',
      comment: 'A projection reads the log and writes its read model; what runs on top of it (and the apps) is above it.',
      severity: 'error',
      from: { path: '^projections/' },
      to: { path: [RUNTIME_LIBS, '^apps/'] },
    },
    {
      name: 'libs-know-no-app',
      comment: 'Code an app shares lives in libs/; no lib reaches back into an app.',
      severity: 'error',
      from: { path: '^libs/' },
      to: { path: '^apps/' },
    },
    {
      name: 'no-app-imports-another',
      comment: 'api, worker and cli share code only through libs/ and projections/.',
      severity: 'error',
      from: { path: '^apps/([^/]+)/' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'every-lib-is-in-a-layer',
      comment: 'A new lib joins a layer here (PORT_LIBS or RUNTIME_LIBS), so the rules above cover it.',
      severity: 'error',
      from: {},
      to: { path: '^libs/', pathNot: ['^libs/domain/', PORT_LIBS, RUNTIME_LIBS] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing (a mistyped @crs/* alias) is a broken build waiting to happen.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['\\.(spec|e2e|int)\\.ts$', '^dist/'] },
    // Type-only imports count: a type from another app couples the code as much as a value does.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.js', '.json', '.d.ts'] },
  },
};
