#!/usr/bin/env node
import {flush, run} from '@oclif/core'
import {reportEscaped} from '../dist/fatal.js'

// oclif's execute() without its error handler: what escapes a command is said in span's voice.
try {
  await run(process.argv.slice(2), import.meta.url)
  await flush()
} catch (err) {
  reportEscaped(err)
}
