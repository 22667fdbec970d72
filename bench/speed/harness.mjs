export * from '../lib/harness.mjs';
