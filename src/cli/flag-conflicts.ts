/**
 * Flag lines that contradict themselves, refused as usage errors (exit 2) before anything is read
 * (issue 36, cause 5): a negatable flag given both ways (`--singletons --no-singletons`: oclif keeps
 * the last and says nothing), and two inputs from stdin (`--gold - --pred -`: one stream cannot be
 * both). For every command, through SpanCommand.parse.
 */
import {UsageError} from '../core/util/errors.js'
import {INPUT_FLAGS} from '../core/util/target.js'

interface RawToken {
  type: string
  flag?: string
  input: string
}

/** Throws a UsageError for `--X` and `--no-X` on one line, or for two inputs that are both `-`. */
export function refuseConflicts(raw: RawToken[], flags: Record<string, unknown>, args: Record<string, unknown>): void {
  const ways = new Map<string, Set<boolean>>()
  for (const t of raw) {
    if (t.type !== 'flag' || t.flag === undefined || !t.input.startsWith('--')) continue
    const negated = t.input === `--no-${t.flag}`
    if (!negated && t.input !== `--${t.flag}` && !t.input.startsWith(`--${t.flag}=`)) continue
    ways.set(t.flag, (ways.get(t.flag) ?? new Set()).add(negated))
  }
  for (const [flag, seen] of ways) if (seen.size > 1) throw new UsageError(`--${flag} and --no-${flag} contradict each other: give one of them`)
  const given = new Set(raw.filter((t) => t.type === 'flag').map((t) => t.flag))
  const stdin = [
    ...(args.file === '-' ? ['the input argument'] : []),
    ...INPUT_FLAGS.filter((f) => given.has(f) && flags[f] === '-').map((f) => (f === 'input' ? '-i/--input' : `--${f}`)),
  ]
  if (stdin.length > 1) throw new UsageError(`${stdin.join(' and ')} both read stdin (-): one stream cannot be both; give all but one of them a file`)
}
