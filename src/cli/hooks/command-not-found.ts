import type {Hook} from '@oclif/core'
import {UsageError} from '../../core/util/errors.js'
import {closest} from '../voice.js'

/**
 * `span bogus`, `span eval bogus`, `span doctor extra` (oclif joins words into a command id while
 * they could name one, so an extra argument of a command without arguments reads as an unknown
 * command): one line in span's voice, exit 2, instead of oclif's "command … not found".
 */
const hook: Hook<'command_not_found'> = async function (opts) {
  const ids = opts.config.commandIDs
  const words = opts.id.split(':')
  const extra = [...words.slice(1).map((_, i) => words.length - 1 - i)].find((k) => ids.includes(words.slice(0, k).join(':')))
  if (extra !== undefined) {
    const cmd = words.slice(0, extra).join(' ')
    const rest = [...words.slice(extra), ...(opts.argv ?? [])].map((a) => JSON.stringify(a)).join(', ')
    throw Object.assign(new UsageError(`unexpected argument ${rest}: it takes no arguments (see span ${cmd} --help)`), {command: cmd})
  }
  if (opts.id.startsWith('-'))
    throw new UsageError(`unknown flag ${JSON.stringify(opts.id)} before a command (span --help lists the commands; span CMD --help their flags)`)
  const inTopic = (t: string) => ids.filter((i) => i.startsWith(`${t}:`)).map((i) => i.slice(t.length + 1))
  const topic = words.length > 1 && inTopic(words.slice(0, -1).join(':')).length > 0 ? words.slice(0, -1).join(':') : ''
  const known = topic ? inTopic(topic) : [...new Set(ids.map((i) => i.split(':')[0]))]
  const word = topic ? (words.at(-1) ?? '') : words.join(' ')
  const guess = closest(word, known)
  const hint = guess ? `did you mean ${JSON.stringify(guess)}? ` : ''
  const list = topic ? `the ${topic} commands are ${known.join(', ')}` : 'span --help lists the commands'
  throw Object.assign(new UsageError(`unknown command ${JSON.stringify(word)} (${hint}${list})`), {command: topic.replaceAll(':', ' ')})
}

export default hook
