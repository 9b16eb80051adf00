/**
 * The layers of Sluice, top-down; a module imports its own layer or one below it, never above, and no
 * cycle, types included (README, "Project layout"):
 *
 *   workers    src/api  src/mcp  src/app   the three workers; never one another
 *   objects    durable-objects/            the Durable Object classes; only the api worker's entry exports them
 *   services   src/services                what the workers share: accounts, keys, the gate and wallet clients,
 *                                          the metered pipeline, OAuth, webhooks, workspace tools
 *   operations src/operations              the registry every surface is generated from
 *   providers  src/providers               vendor clients and the built-in web provider
 *   core       src/core                    contracts and building blocks: envelope, errors, schemas, settings,
 *                                          the operation contract, the objects' and the gateway's protocols
 */
const layer = {
  workers: '^src/(api|mcp|app)/',
  objects: '^durable-objects/',
  services: '^src/services/',
  operations: '^src/operations/',
  providers: '^src/providers/',
  core: '^src/core/',
};
const above = (...names) => names.map((name) => layer[name]);

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'A cycle, through types too, ties modules that should stand alone.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'workers-stand-alone',
      severity: 'error',
      comment: 'A worker never imports another worker: what two of them share lives in services or core.',
      from: { path: '^src/(api|mcp|app)/' },
      to: { path: '^src/(api|mcp|app)/', pathNot: '^src/$1/' },
    },
    {
      name: 'objects-below-workers',
      severity: 'error',
      from: { path: layer.objects },
      to: { path: above('workers') },
    },
    {
      name: 'objects-behind-protocols',
      severity: 'error',
      comment: 'Only the api worker\'s entry (which exports the classes) sees a Durable Object class; every other module talks to an object through its protocol in src/core/protocols.',
      from: { path: '^src/', pathNot: '^src/api/index\\.ts$' },
      to: { path: layer.objects },
    },
    {
      name: 'services-below-objects',
      severity: 'error',
      from: { path: layer.services },
      to: { path: above('workers', 'objects') },
    },
    {
      name: 'operations-below-services',
      severity: 'error',
      from: { path: layer.operations },
      to: { path: above('workers', 'objects', 'services') },
    },
    {
      name: 'providers-below-operations',
      severity: 'error',
      from: { path: layer.providers },
      to: { path: above('workers', 'objects', 'services', 'operations') },
    },
    {
      name: 'core-imports-nothing-above',
      severity: 'error',
      from: { path: layer.core },
      to: { path: above('workers', 'objects', 'services', 'operations', 'providers') },
    },
    {
      name: 'product-code-not-from-tests',
      severity: 'error',
      from: { path: '^(src|durable-objects)/' },
      to: { path: '^(test|scripts)/' },
    },
    {
      name: 'product-code-not-from-dev-dependencies',
      severity: 'error',
      comment: 'What the workers bundle must be a runtime dependency.',
      from: { path: '^(src|durable-objects)/', pathNot: '\\.d\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'workerd', 'worker'] },
    exclude: { path: '(^|/)(node_modules|dist)/' },
  },
};
