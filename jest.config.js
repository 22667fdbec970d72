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
  testTimeout: 60000,
  verbose: false,
};
