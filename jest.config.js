const { pathsToModuleNameMapper } = require('ts-jest');
const { compilerOptions } = require('./tsconfig.json');

/** Test tiers by suffix: *.spec.ts (pure logic, projections) next to the code; test/integration and test/e2e against real Postgres. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/projections', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e.ts', '**/*.int.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The @crs/* path aliases, from tsconfig.json (the build rewrites them with tsc-alias).
  moduleNameMapper: pathsToModuleNameMapper(compilerOptions.paths, { prefix: '<rootDir>/' }),
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60000,
  modulePathIgnorePatterns: ['<rootDir>/dist', '<rootDir>/.data'],
};
