/**
 * vitest setupFile: the commands the tests run in-process (@oclif/test's runCommand) load dist/ as
 * bin/run.js does, without oclif's auto-transpile. vitest sets NODE_ENV=test, under which oclif
 * would otherwise look for tsx and ts-node and load TypeScript to read tsconfig.json in each test
 * file that runs a command (about 0.9 CPU-seconds), only to load dist/ anyway. oclif keeps its
 * settings in globalThis.oclif (@oclif/core's settings.ts); set here without importing oclif, which
 * most test files never load.
 */
const g = globalThis as {oclif?: Record<string, unknown>}
g.oclif = {...g.oclif, enableAutoTranspile: false}
