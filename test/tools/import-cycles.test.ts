import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

// tools/import-cycles.mjs (npm run lint) on small trees of its own (--src): the layer order of
// tools/layers.mjs, file-level cycles (type-only imports counted), tensors in pure rooms; and src/
// itself passes.
const tool = join(import.meta.dirname, '../../tools/import-cycles.mjs')
let dir = ''

function tree(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'span-imports-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), {recursive: true})
    writeFileSync(join(dir, path), text)
  }
  return dir
}

const run = (src?: string) => spawnSync(process.execPath, [tool, ...(src ? ['--src', src] : [])], {encoding: 'utf8'})

afterEach(() => {
  if (dir) rmSync(dir, {recursive: true, force: true})
  dir = ''
})

describe('tools/import-cycles.mjs', () => {
  it('passes src/ as it is', () => {
    const r = run()
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/every import downward, no cycle/)
  })

  it('passes a tree whose imports go downward', () => {
    const r = run(tree({'core/model/a.ts': "import {b} from '../engine/b.js'\nexport const a = b\n", 'core/engine/b.ts': 'export const b = 1\n'}))
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('fails an engine file that imports the model, even for a type, naming file and line', () => {
    const r = run(tree({'core/engine/b.ts': "\nimport type {A} from '../model/a.js'\nexport type B = A\n", 'core/model/a.ts': 'export type A = number\n'}))
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/\/core\/engine\/b\.ts:2: core\/engine may not import core\/model \(.*core\/model\/a\.ts\)/m)
  })

  it('fails core/ importing the command-line layer, and a dynamic import counts', () => {
    const r = run(tree({'core/util/u.ts': "export const u = () => import('../../cli/c.js')\n", 'cli/c.ts': 'export const c = 1\n'}))
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/core\/util may not import cli/)
  })

  it('fails a cycle of two files in one room made of type-only imports', () => {
    const r = run(
      tree({
        'core/data/a.ts': "import type {B} from './b.js'\nexport type A = {b?: B}\n",
        'core/data/b.ts': "import type {A} from './a.js'\nexport type B = {a?: A}\n",
      }),
    )
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/^import cycle: .*core\/data\/a\.ts <-> .*core\/data\/b\.ts$/m)
  })

  it('fails tfjs in a room without tensors, and a file in no room', () => {
    const r = run(tree({'core/metrics/m.ts': "import * as tf from '@tensorflow/tfjs'\nexport const m = tf\n", 'core/attic/x.ts': 'export const x = 1\n'}))
    expect(r.status).toBe(1)
    expect(r.stderr).toMatch(/core\/metrics\/m\.ts:1: core\/metrics holds no tensor code, but imports @tensorflow\/tfjs/)
    expect(r.stderr).toMatch(/core\/attic\/x\.ts: in no room of tools\/layers\.mjs/)
  })

  it('passes over imports in comments and strings', () => {
    const r = run(
      tree({
        'core/engine/b.ts': "// import {a} from '../model/a.js'\nexport const s = \"import {a} from '../model/a.js'\"\n",
        'core/model/a.ts': 'export const a = 1\n',
      }),
    )
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })
})
