#!/usr/bin/env node
// Holds native/src/dist.cc's dlopen view of Open MPI against the installed mpi.h (Debian:
// libopenmpi-dev): the preprocessor's expansion of each handle must name the global we dlsym,
// MPI_IN_PLACE must be ((void*)1) and MPI_THREAD_FUNNELED 1. Prints one line per check and
// exits 1 on a mismatch, 0 with "skipped: …" when no mpi.h or compiler is found.
// Usage: node tools/check-mpi-abi.mjs [--json]
import {spawnSync} from 'node:child_process'
import {existsSync} from 'node:fs'

const HANDLES = {
  MPI_COMM_WORLD: 'ompi_mpi_comm_world',
  MPI_FLOAT: 'ompi_mpi_float',
  MPI_DOUBLE: 'ompi_mpi_double',
  MPI_BYTE: 'ompi_mpi_byte',
  MPI_SUM: 'ompi_mpi_op_sum',
}
const INCLUDES = ['/usr/lib/x86_64-linux-gnu/openmpi/include', '/usr/lib/aarch64-linux-gnu/openmpi/include', '/usr/include/openmpi', '/usr/include']

function main() {
  const dir = INCLUDES.find((d) => existsSync(`${d}/mpi.h`))
  const cc = ['cc', 'gcc', 'clang'].find((c) => spawnSync(c, ['--version']).status === 0)
  if (!dir || !cc) return report([], `skipped: ${dir ? 'no C compiler' : 'no mpi.h (apt-get install libopenmpi-dev)'}`)
  const names = [...Object.keys(HANDLES), 'MPI_IN_PLACE', 'MPI_THREAD_FUNNELED']
  const src = `#include <mpi.h>\n${names.map((n) => `SPAN_${n}: ${n}`).join('\n')}\nSPAN_VERSION: OMPI_MAJOR_VERSION\n`
  const r = spawnSync(cc, ['-E', '-P', `-I${dir}`, '-x', 'c', '-'], {input: src, encoding: 'utf8'})
  if (r.status !== 0) return report([], `skipped: ${cc} -E failed: ${r.stderr.split('\n')[0]}`)
  const line = (n) => (r.stdout.split('\n').find((l) => l.startsWith(`SPAN_${n}:`)) ?? '').slice(`SPAN_${n}:`.length).replace(/\s+/g, '')
  const checks = Object.entries(HANDLES).map(([n, sym]) => ({
    name: n,
    want: sym,
    got: line(n),
    ok: new RegExp(`&\\(?${sym}\\)`).test(line(n)) || line(n).includes(`&(${sym})`),
  }))
  checks.push({name: 'MPI_IN_PLACE', want: '((void*)1)', got: line('MPI_IN_PLACE'), ok: line('MPI_IN_PLACE') === '((void*)1)'})
  // an enum member stays a name under -E; the header's enum order is SINGLE, FUNNELED, …
  checks.push({
    name: 'MPI_THREAD_FUNNELED',
    want: 'second of the enum (1)',
    got: line('MPI_THREAD_FUNNELED'),
    ok: /MPI_THREAD_SINGLE,\s*MPI_THREAD_FUNNELED/.test(r.stdout),
  })
  return report(checks, `Open MPI ${line('VERSION')} headers in ${dir}`)
}

function report(checks, note) {
  const bad = checks.filter((c) => !c.ok)
  if (process.argv.includes('--json')) process.stdout.write(JSON.stringify({note, checks, ok: bad.length === 0}) + '\n')
  else {
    process.stdout.write(`${note}\n`)
    for (const c of checks) process.stdout.write(`${c.ok ? 'ok ' : 'BAD'} ${c.name}: ${c.got} (want ${c.want})\n`)
  }
  process.exitCode = bad.length ? 1 : 0
}

main()
