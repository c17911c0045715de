#!/usr/bin/env node

// A working directory removed under the shell: oclif would print its own "WARNING: current
// directory does not exist" as it loads, and every relative path would fail without naming
// itself. Said once in span's voice, before oclif loads, exit 1 (README "Exit codes").
try {
  process.cwd()
} catch (err) {
  if (err?.code !== 'ENOENT') throw err
  process.stderr.write('span: the working directory no longer exists (removed while in use): cd to a directory that exists and run span again\n')
  process.exit(1)
}
const {run, settings} = await import('@oclif/core')
// span runs its compiled dist/ and nothing else. Under NODE_ENV=development or test (vitest sets
// test for every process the tests start) oclif would otherwise look for tsx and ts-node and read
// tsconfig.json in each process to map dist/ back to src/: about 0.9 CPU-seconds a command, for a
// path that ends in dist/ anyway.
settings.enableAutoTranspile = false
const {reportEscaped} = await import('../dist/cli/fatal.js')

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
