// What a span process loads before its command runs. vitest sets NODE_ENV=test for every process
// the tests start, as a developer's shell may set development: oclif then looks for tsx and
// ts-node and reads tsconfig.json with TypeScript to map dist/ back to src/, in every process
// (about 0.9 CPU-seconds each). bin/run.js turns that off: span runs its compiled dist/ only.
import {runCommand} from '@oclif/test'
import {createRequire} from 'node:module'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {BIN, ROOT} from '../helpers/spawn.js'
import {spawnSync} from 'node:child_process'

const tmp = mkdtempSync(join(tmpdir(), 'span-startup-'))
// Preloaded into the span process: at its exit, says which TypeScript compilers it had loaded.
const PROBE = join(tmp, 'probe.cjs')
writeFileSync(
  PROBE,
  "process.on('exit', () => { const ts = Object.keys(require.cache).filter((k) => /node_modules\\/(typescript|tsx|ts-node)\\//.test(k)); if (ts.length) process.stderr.write(`loaded: ${ts[0]}\\n`) })\n",
)

describe('span start-up', () => {
  for (const env of ['test', 'development', 'production'])
    it(`loads no TypeScript compiler, tsx or ts-node under NODE_ENV=${env}`, () => {
      const r = spawnSync(process.execPath, ['--require', PROBE, BIN, 'tokenize', 'no-such-file'], {
        cwd: tmp,
        env: {...process.env, NODE_ENV: env},
        encoding: 'utf8',
      })
      expect(r.stderr).toBe('span tokenize: no-such-file: no such file\n')
      expect(r.status).toBe(1)
    })

  it("in-process (@oclif/test, under vitest's NODE_ENV=test) loads no TypeScript compiler either (test/helpers/oclif-settings.ts)", async () => {
    const {stderr} = await runCommand(['tokenize', join(tmp, 'no-such-file')], {root: ROOT})
    expect(stderr).toMatch(/^span tokenize: .*no-such-file: no such file\n$/)
    process.exitCode = undefined // the failing command set it; the test runner must not inherit it
    expect(Object.keys(createRequire(import.meta.url).cache).filter((k) => /node_modules\/(typescript|tsx|ts-node)\//.test(k))).toEqual([])
  })
})
