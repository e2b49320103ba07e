// ts-jest's ESM preset; `npm test` sets NODE_OPTIONS=--experimental-vm-modules.
export default {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['**/*.test.ts'],
};
