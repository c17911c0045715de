import type {Hook} from '@oclif/core'
import {UsageError} from '../core/util/errors.js'
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
  const topic = words.length > 1 ? words.slice(0, -1).join(':') : ''
  const known = topic ? ids.filter((i) => i.startsWith(`${topic}:`)).map((i) => i.slice(topic.length + 1)) : [...new Set(ids.map((i) => i.split(':')[0]))]
  const word = words.at(-1) ?? ''
  const guess = closest(word, known)
  const hint = guess ? `did you mean ${JSON.stringify(guess)}? ` : ''
  const list = topic ? `the ${topic} commands are ${known.join(', ')}` : 'span --help lists the commands'
  throw Object.assign(new UsageError(`unknown command ${JSON.stringify(word)} (${hint}${list})`), {command: topic.replaceAll(':', ' ')})
}

export default hook
