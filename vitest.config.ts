import {availableParallelism} from 'node:os'
import {defineConfig} from 'vitest/config'

// Under CI a JSON report is written too, so .ci/run can print the `N passed, N failed` line.
const reporters = process.env.CI ? ['default', ['json', {outputFile: '.vitest-report.json'}]] : ['default']

export default defineConfig({
  // SPAN_VITEST_CACHE: a folder outside the clone (.ci/run sets one) where vitest keeps each file's
  // last duration, so that a clean clone still runs the longest files first and the workers end together.
  cacheDir: process.env.SPAN_VITEST_CACHE || undefined,
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // vitest's default is one worker fewer than the cores: a single worker on CI's two, where the
    // files (most of them waiting on span processes they start one at a time) ran one after another.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ['test/helpers/tmp-root.ts', 'test/helpers/cuda-precision.ts', 'test/helpers/native-precision.ts'],
    setupFiles: ['test/helpers/oclif-settings.ts'],
    reporters: reporters as never,
  },
})
