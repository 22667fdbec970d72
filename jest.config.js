// Jest runs the TypeScript sources as native ES modules through SWC. Decorator metadata must be
// emitted or Nest's dependency injection cannot see constructor parameter types.
const swcOptions = {
  jsc: {
    target: 'es2022',
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: 'inline',
};

export default {
  testEnvironment: 'node',
  rootDir: '.',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', swcOptions] },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  globalSetup: '<rootDir>/test/utils/global-setup.mjs',
  globalTeardown: '<rootDir>/test/utils/global-teardown.mjs',
  maxWorkers: process.env.JEST_MAX_WORKERS ?? 2,
  // Each test file loads the app's ES modules into a fresh VM context, and a worker does not give that memory back:
  // after about 130 files a worker held 4.4 GB, at V8's heap limit, and spent its time collecting garbage (a 7 s
  // file took 148 s, and tests with their own time-outs failed). A worker past this much is replaced between files.
  workerIdleMemoryLimit: process.env.JEST_WORKER_MEMORY_LIMIT ?? '1536MB',
  testTimeout: 60000,
  verbose: false,
};
