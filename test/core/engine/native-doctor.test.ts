// `span doctor` (src/commands/doctor.ts): one line per backend and the backend auto picks.
import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {type BackendReport, DOCTOR_ORDER, autoPick} from '../../../src/core/engine/doctor.js'
import {AUTO_ORDER} from '../../../src/core/engine/backend.js'
import {loadNative} from '../../../src/core/engine/native.js'

const root = join(import.meta.dirname, '..', '..', '..')
const report = (available: Record<string, boolean>): BackendReport[] =>
  DOCTOR_ORDER.map((backend) => ({backend, available: available[backend] ?? false, detail: ''}))

describe('autoPick', () => {
  it('takes the first available backend of auto\'s order', () => {
    expect(autoPick(report({wasm: true, cpu: true}))).toBe('wasm')
    expect(autoPick(report({tensorflow: true, wasm: true, cpu: true}))).toBe('tensorflow')
    expect(autoPick(report({}))).toBeNull()
  })

  it('prefers native over wasm exactly when backend.ts lists it', () => {
    const inOrder = (AUTO_ORDER as readonly string[]).includes('native')
    expect(autoPick(report({native: true, wasm: true, cpu: true}))).toBe(inOrder ? 'native' : 'wasm')
  })
})

describe('span doctor', () => {
  it('prints every backend once, native with its BLAS when built, and the pick', () => {
    const r = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor', '--json'], {cwd: root, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(lines.slice(0, -1).map((l) => l.backend)).toEqual([...DOCTOR_ORDER])
    const native = lines.find((l) => l.backend === 'native')
    const status = loadNative()
    expect(native.available).toBe(status.available)
    if (status.available) expect(native.detail).toContain(`BLAS ${status.blas}`)
    else expect(native.detail).toBe(status.error)
    expect(lines.find((l) => l.backend === 'cpu').available).toBe(true)
    const pick = lines[lines.length - 1]
    expect(DOCTOR_ORDER).toContain(pick.auto)
  })

  it('explains, in text, why each other backend was not picked', () => {
    const r = spawnSync('node', [join(root, 'bin', 'run.js'), 'doctor'], {cwd: root, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^auto picks: \S+$/m)
    expect(r.stdout.match(/^ {2}not \S+: .+$/gm)).toHaveLength(DOCTOR_ORDER.length - 1)
  })
})

describe('without the addon (SPAN_NATIVE_ADDON naming a missing file)', () => {
  const env = {...process.env, SPAN_NATIVE_ADDON: join(root, 'no-such-addon.node')}
  const span = (args: string[], input?: string) => spawnSync('node', [join(root, 'bin', 'run.js'), ...args], {cwd: root, env, input, encoding: 'utf8'})

  it('doctor says why native is missing and auto picks wasm', () => {
    const r = span(['doctor'])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^native +missing +the addon is not built \(.*no-such-addon\.node missing/m)
    expect(r.stdout).toMatch(/^auto picks: wasm$/m)
  })

  it('a command on --backend auto falls back to wasm with one line saying so; --backend native is an error', () => {
    const masked = ['tokenize', 'block', 'mask'].reduce((input, cmd) => span(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], input).stdout, 'the union is strong\n')
    const args = ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--max-steps', '1', '--out', join(mkdtempSync(join(tmpdir(), 'span-no-addon-')), 'model')]
    const r = span(args, masked)
    expect(r.status, r.stderr).toBe(0)
    const notices = r.stderr.split('\n').filter((l) => l.startsWith('span: the native backend is unavailable'))
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatch(/\(the addon is not built .*\); using wasm, several times slower \(see span doctor\)$/)
    expect(r.stderr).toContain('backend wasm')
    const explicit = span([...args.slice(0, -1), `${args.at(-1)}-2`, '--backend', 'native'], masked) // a new run needs an empty --out
    expect(explicit.status).not.toBe(0)
    expect(explicit.stderr.trim()).toMatch(/^span pretrain: --backend native is not available: the addon is not built/)
  })
})
