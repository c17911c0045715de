// One voice (issue 24 item 5, issue 25 cause 10): oclif's own wording never reaches the user.
// Every command's required flags, exclusive and dependent pairs, an unknown, repeated and
// valueless flag, and an extra argument, walked from oclif.manifest.json (in-process, through
// oclif and SpanCommand.catch); the spawned cases check bin/run.js itself.
import {runCommand} from '@oclif/test'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const root = join(__dirname, '..', '..')
interface ManifestFlag {
  name: string
  type: 'option' | 'boolean'
  required?: boolean
  multiple?: boolean
  exclusive?: string[]
  dependsOn?: string[]
  options?: string[]
  default?: unknown
}
interface ManifestCommand {
  flags: Record<string, ManifestFlag>
  args: Record<string, unknown>
}
const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, ManifestCommand>}
const commands = Object.entries(manifest.commands)

afterEach(() => {
  process.exitCode = undefined
})

/** A value a flag accepts at parse time (the command fails later, on the file; never at parse). */
const valueOf = (f: ManifestFlag): string[] => (f.type === 'boolean' ? [`--${f.name}`] : [`--${f.name}`, f.options?.[0] ?? 'nonexistent-value'])
const required = (c: ManifestCommand, except = ''): string[] =>
  Object.values(c.flags)
    .filter((f) => f.required && f.name !== except)
    .flatMap(valueOf)

/** oclif's wordings that must never reach the user. */
const OCLIF = /following errors? occurred|Missing required flag|Nonexistent flag|can only be specified once|expects a value|See more help|›|Error:|Parsing --/

async function usageLine(id: string, argv: string[]): Promise<string> {
  const r = await runCommand([id.replaceAll(':', ' '), ...argv], {root})
  expect(r.stdout).toBe('')
  expect(process.exitCode, `${id} ${argv.join(' ')}: ${r.stderr}`).toBe(2)
  expect(r.stderr).toMatch(new RegExp(`^span ${id.replaceAll(':', ' ')}: [^\\n]+\\n$`)) // one line
  expect(r.stderr).not.toMatch(OCLIF)
  process.exitCode = undefined
  return r.stderr
}

describe('every command, every required flag (from the manifest)', () => {
  const cases = commands.flatMap(([id, c]) =>
    Object.values(c.flags)
      .filter((f) => f.required)
      .map((f) => [id, f.name] as const),
  )
  it('has required flags to walk', () => expect(cases.length).toBeGreaterThan(30))
  it.each(cases)('%s without --%s names the flag and what it is for, exit 2', async (id, name) => {
    const line = await usageLine(id, required(manifest.commands[id], name))
    expect(line).toMatch(new RegExp(`: missing --${name}( [A-Z|0-9.a-z-]+)?: \\S.*\\n$`))
  })
})

describe('every exclusive and dependent pair (from the manifest)', () => {
  const exclusive = commands.flatMap(([id, c]) =>
    Object.values(c.flags).flatMap((f) => (f.exclusive ?? []).filter((o) => f.name < o).map((o) => [id, f.name, o] as const)),
  )
  it('has pairs to walk', () => expect(exclusive.length).toBeGreaterThan(5))
  it.each(exclusive)('%s --%s with --%s: one line naming both, exit 2', async (id, a, b) => {
    const c = manifest.commands[id]
    const line = await usageLine(id, [...required(c), ...valueOf(c.flags[a]), ...valueOf(c.flags[b])])
    expect(line).toContain(`--${a} (`)
    expect(line).toContain(`--${b} (`)
    expect(line).toMatch(/exclude each other: give one\n$/)
  })
  const depends = commands.flatMap(([id, c]) => Object.values(c.flags).flatMap((f) => (f.dependsOn ?? []).map((o) => [id, f.name, o] as const)))
  it.each(depends)('%s --%s without --%s says what it needs, exit 2', async (id, a, b) => {
    const c = manifest.commands[id]
    const line = await usageLine(id, [...required(c), ...valueOf(c.flags[a])])
    expect(line).toContain(`--${a} needs --${b}`)
  })
})

describe('every command: unknown, repeated and valueless flags, extra arguments', () => {
  it.each(commands.map(([id]) => [id]))('%s', async (id) => {
    const c = manifest.commands[id]
    const req = required(c)
    expect(await usageLine(id, [...req, '--no-such-flag'])).toContain('unknown flag "--no-such-flag"')
    const option = Object.values(c.flags).find((f) => f.type === 'option' && !f.multiple && !f.options)
    if (option) {
      const twice = await usageLine(id, [
        ...req.filter((_, i) => req[i - 1] !== `--${option.name}` && req[i] !== `--${option.name}`),
        ...valueOf(option),
        ...valueOf(option),
      ])
      expect(twice).toContain(`--${option.name} given more than once: give it once (--${option.name}`)
      const without = await usageLine(id, [...req.filter((_, i) => req[i - 1] !== `--${option.name}` && req[i] !== `--${option.name}`), `--${option.name}`])
      expect(without).toContain(`--${option.name} needs a value (--${option.name}`)
    }
    const nArgs = Object.keys(c.args).length
    if (nArgs > 0) {
      const extra = await usageLine(id, [...req, ...Array.from({length: nArgs + 1}, (_, i) => `arg${i}`)])
      expect(extra).toContain(`unexpected argument "arg${nArgs}": it takes one argument`)
    }
  })
})

describe('bin/run.js: what escapes a command is said in span’s voice', () => {
  it('an unknown command, exit 2', () => {
    const r = runSpan(['bogus'])
    expect(r.stderr).toBe('span: unknown command "bogus" (span --help lists the commands)\n')
    expect(r.code).toBe(2)
    expect(runSpan(['evl']).stderr).toBe('span: unknown command "evl" (did you mean "eval"? span --help lists the commands)\n')
    expect(runSpan(['--bogus']).stderr).toBe('span: unknown flag "--bogus" before a command (span --help lists the commands; span CMD --help their flags)\n')
    expect(runSpan(['help', 'bogus']).stderr).toBe('span: unknown command "help bogus" (span --help lists the commands)\n')
    const sub = runSpan(['eval', 'sqad'])
    expect(sub.stderr).toMatch(/^span eval: unknown command "sqad" \(did you mean "squad"\? the eval commands are compare, .*\)\n$/)
    expect(sub.code).toBe(2)
  })

  it('an extra argument of a command without arguments, exit 2', () => {
    const r = runSpan(['doctor', 'extra'])
    expect(r.stderr).toBe('span doctor: unexpected argument "extra": it takes no arguments (see span doctor --help)\n')
    expect(r.code).toBe(2)
    expect(runSpan(['eval', 'squad', 'x', 'y']).stderr).toBe(
      'span eval squad: unexpected argument "x", "y": it takes no arguments (see span eval squad --help)\n',
    )
  })

  it('the issue’s own example: a missing flag, exit 2', () => {
    const r = runSpan(['eval', 'squad', '--pred', 'out.json'])
    expect(r.stderr).toBe('span eval squad: missing --data FILE: the gold SQuAD dataset (JSON)\n')
    expect(r.code).toBe(2)
  })

  it('a path with a newline or an escape sequence stays one line, control characters escaped', () => {
    const r = runSpan(['block', 'a\nb\u001b[31m.ndjson'])
    expect(r.stderr).toBe('span block: "a\\nb\\u001b[31m.ndjson": no such file\n')
    expect(r.code).toBe(1)
  })
})
