import {defineConfig} from 'vitest/config'

// Under CI a JSON report is written too, so .ci/run can print the `N passed, N failed` line.
const reporters = process.env.CI ? ['default', ['json', {outputFile: '.vitest-report.json'}]] : ['default']

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    globalSetup: ['test/helpers/tmp-root.ts', 'test/helpers/cuda-precision.ts', 'test/helpers/native-precision.ts'],
    reporters: reporters as never,
  },
})
