#!/usr/bin/env node
import {run} from '@oclif/core'
import {reportEscaped} from '../dist/cli/fatal.js'

/**
 * Waits until stdout has written what is buffered (a pipe on macOS is asynchronous). Not oclif's
 * flush(): it writes '' and waits for a 'drain' that a failed stdout (> /dev/full) never emits,
 * under an unref'd timer, so a command with nothing to print ended with Node's exit 13.
 */
async function drained() {
  const out = process.stdout
  if (out.writableLength === 0 || out.destroyed || out.errored) return
  await new Promise((resolve) => {
    const t = setTimeout(resolve, 10_000)
    const done = () => {
      clearTimeout(t)
      resolve(null)
    }
    out.once('drain', done)
    out.once('error', done)
    out.once('close', done)
  })
}

// oclif's execute() without its error handler: what escapes a command is said in span's voice.
try {
  await run(process.argv.slice(2), import.meta.url)
  await drained()
} catch (err) {
  reportEscaped(err)
}
