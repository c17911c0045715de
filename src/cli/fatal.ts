import {SpanError, internalError, oneLine} from '../core/util/errors.js'

/**
 * An error that escaped every command's own catch (bin/run.js): an unknown command from the
 * command_not_found hook, oclif failing to load, a bug. One line in span's voice, as
 * SpanCommand prints: usage errors exit 2, the rest 1; oclif's exit(n) keeps its code.
 */
export function reportEscaped(err: unknown): void {
  const e = err instanceof Error ? err : new Error(String(err))
  const exit = (e as {oclif?: {exit?: number}}).oclif?.exit
  if (e.name === 'ExitError' && exit !== undefined) {
    process.exitCode = exit
    return
  }
  const command = (e as {command?: string}).command
  const message = e instanceof SpanError ? e.message : internalError(e)
  process.stderr.write(oneLine(`span${command ? ` ${command}` : ''}: ${message}`) + '\n')
  process.exitCode = e instanceof SpanError ? e.exitCode : 1
}
