/**
 * oclif's flag and argument errors said in span's voice (README "Exit codes"): one line naming
 * the flag and what it is for, taken from the flag's own description, so every command gets it
 * without code of its own. Each translation reads the message oclif's parser made (its error
 * classes keep no structured reasons for required and exclusive flags); a message it does not
 * know keeps its text, made one line. test/commands/voice.test.ts walks every command's flags.
 */

/** What a flag looks like to this module: a command class's flag or a manifest entry. */
export interface FlagSpec {
  name?: string
  char?: string
  type?: string
  description?: string
  summary?: string
  helpValue?: string | string[]
  options?: readonly string[]
  default?: unknown
}

export type FlagTable = Record<string, FlagSpec>

const DIR = /\b(director(y|ies)|run directory|checkpoint|model)\b/i

/** The value a flag takes, as help shows it: FILE, DIR, N, one of its options, or VALUE. */
export function valueName(name: string, f: FlagSpec | undefined): string {
  if (!f || f.type === 'boolean') return ''
  if (typeof f.helpValue === 'string') return f.helpValue
  if (f.options && f.options.length <= 4) return f.options.join('|')
  if (typeof f.default === 'number') return 'N'
  const d = `${name} ${f.description ?? f.summary ?? ''}`
  if (/^(out|to|resume|init|model|tmp-dir)$/.test(name) || (DIR.test(d) && !/\bfile\b/i.test(d))) return 'DIR'
  if (/\b(file|json|ndjson|tsv|csv|conll|dataset|data|predictions?|labels|vocab(ulary)?|dictionary|svg)\b/i.test(d)) return 'FILE'
  if (f.type === 'option' && /\b(number|count|size|steps?|len(gth)?|rate|threads|batch)\b/i.test(d)) return 'N'
  return 'VALUE'
}

/** What a flag is for: its description's first clause, without a trailing period. */
export function purpose(f: FlagSpec | undefined): string {
  const d = (f?.summary ?? f?.description ?? '').split('\n')[0].trim()
  const cut = d.length > 120 ? `${d.slice(0, 117).replace(/\s+\S*$/, '')}…` : d
  return cut.replace(/\.$/, '')
}

/** `--name VALUE` with what the flag is for: `--data FILE: the gold SQuAD dataset (JSON)`. */
export function describeFlag(name: string, flags: FlagTable): string {
  const f = flags[name]
  const v = valueName(name, f)
  const what = purpose(f)
  return `--${name}${v ? ` ${v}` : ''}${what ? `: ${what}` : ''}`
}

/** The closest flag name to a mistyped one (edit distance ≤ 2), for "did you mean". */
export function closest(word: string, names: string[]): string | undefined {
  let best: string | undefined
  let bestD = 3
  for (const n of names) {
    const d = distance(word, n)
    if (d < bestD) [best, bestD] = [n, d]
  }
  return best
}

function distance(a: string, b: string): number {
  let prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    prev = cur
  }
  return prev[b.length]
}

const flagList = (s: string): string[] => s.split(/,\s*/).map((x) => x.trim().replace(/^--/, '').replace(/=.*$/, ''))

/** Each of oclif's reasons (one per line of a validation error), said in span's voice. */
const REASONS: [RegExp, (m: RegExpMatchArray, flags: FlagTable) => string][] = [
  [/^Missing required flag (\S+)$/, (m, f) => `missing ${describeFlag(m[1], f)}`],
  [/^--(\S+?)(?:=.*)? cannot also be provided when using --(\S+)$/, (m, f) => exclusive(m[2], m[1], f)],
  [
    /^Exactly one of the following must be provided: (.*)$/,
    (m, f) =>
      `give exactly one of ${flagList(m[1])
        .map((n) => describeFlag(n, f))
        .join('; ')}`,
  ],
  [
    /^At least one of the following must be provided: (.*)$/,
    (m, f) =>
      `give at least one of ${flagList(m[1])
        .map((n) => describeFlag(n, f))
        .join('; ')}`,
  ],
  [
    /^(?:All|One) of the following must be provided when using --(\S+): (.*)$/,
    (m, f) =>
      `--${m[1]} needs ${flagList(m[2])
        .map((n) => describeFlag(n, f))
        .join('; ')}`,
  ],
  [
    /^Only the following can be provided when using --(\S+): (.*)$/,
    (m) =>
      `--${m[1]} can be given only with ${flagList(m[2])
        .map((n) => `--${n}`)
        .join(', ')}`,
  ],
]

/** Two flags that exclude each other, named in a fixed order (oclif reports each pair both ways). */
function exclusive(a: string, b: string, f: FlagTable): string {
  const [x, y] = [a, b].sort()
  const what = (n: string) => (purpose(f[n]) ? ` (${purpose(f[n])})` : '')
  return `--${x}${what(x)} and --${y}${what(y)} exclude each other: give one`
}

/** oclif's "Expected an integer …" messages of a flag's value, shorter. */
function valueProblem(msg: string): string {
  return msg
    .replace(/^Expected an integer greater than or equal to (\S+) but received: (.*)$/s, 'expected an integer ≥ $1, got $2')
    .replace(/^Expected an integer less than or equal to (\S+) but received: (.*)$/s, 'expected an integer ≤ $1, got $2')
    .replace(/^Expected an integer but received: (.*)$/s, 'expected an integer, got $1')
}

// eslint-disable-next-line no-control-regex -- the escape sequences are what this removes
const ANSI = /\u001b\[[0-9;]*m/g

/** The line for one of oclif's parse errors, or null when `message` is not one of the parser's. */
export function parseErrorLine(message: string, flags: FlagTable, args: {name: string; description?: string}[]): string | null {
  const msg = message.replace(/\s*See more help with --help\s*$/, '')
  let m: RegExpMatchArray | null
  if ((m = msg.match(/^The following errors? occurred:\s*\n([\s\S]*)$/))) {
    const reasons = m[1]
      .replace(ANSI, '') // oclif dims the reasons with ANSI colours
      .split('\n')
      .map((r) => r.trim())
      .filter(Boolean)
    const said = reasons.map((r) => {
      for (const [re, say] of REASONS) {
        const hit = r.match(re)
        if (hit) return say(hit, flags)
      }
      return r
    })
    return [...new Set(said)].join('; and ')
  }
  if ((m = msg.match(/^Parsing --(\S+)\s*\n\s*([\s\S]*)$/))) return `--${m[1]}: ${valueProblem(m[2].trim())} (${describeFlag(m[1], flags)})`
  if ((m = msg.match(/^Nonexistent flags?: (.*)$/))) return unknownFlags(m[1].split(/,\s*/), flags)
  if ((m = msg.match(/^Unexpected flag (.*)$/))) return unknownFlags([m[1]], flags)
  if ((m = msg.match(/^Flag --(\S+) can only be specified once$/))) return `--${m[1]} given more than once: give it once (${describeFlag(m[1], flags)})`
  if ((m = msg.match(/^Flag --(\S+) expects a value$/))) return `--${m[1]} needs a value (${describeFlag(m[1], flags)})`
  if ((m = msg.match(/^Flag --(\S+) expects one of these values: (.*)$/))) return `--${m[1]} needs one of ${m[2]} (${describeFlag(m[1], flags)})`
  if ((m = msg.match(/^Expected --(\S+?)=([\s\S]*) to be one of: (.*)$/)))
    return `--${m[1]} ${JSON.stringify(m[2])}: expected one of ${m[3]} (${describeFlag(m[1], flags)})`
  if ((m = msg.match(/^Unexpected arguments?: (.*)$/))) return unexpectedArgs(m[1], args)
  if ((m = msg.match(/^Missing \d+ required args?/))) return `missing ${args.map((a) => `${a.name.toUpperCase()} (${a.description ?? ''})`).join(', ')}`
  return null
}

function unknownFlags(tokens: string[], flags: FlagTable): string {
  const names = Object.keys(flags)
  return tokens
    .map((t) => {
      const guess = t.startsWith('--') ? closest(t.slice(2).replace(/=.*$/, ''), names) : undefined
      return `unknown flag ${JSON.stringify(t)}${guess ? ` (did you mean --${guess}?)` : ''}`
    })
    .join('; ')
}

function unexpectedArgs(list: string, args: {name: string; description?: string}[]): string {
  const named = args.map((a) => `${a.name.toUpperCase()}${a.description ? `: ${a.description}` : ''}`).join('; ')
  const what = args.length === 0 ? 'it takes no arguments' : `it takes ${args.length === 1 ? 'one argument' : `${args.length} arguments`} (${named})`
  return `unexpected argument ${list
    .split(/,\s*/)
    .map((a) => JSON.stringify(a))
    .join(', ')}: ${what}`
}
