#!/usr/bin/env node
// Compiler and linker flags for binding.gyp: `node arch-flags.mjs <cflags|ldflags>`. A normal
// build tunes for this CPU (-march=native); SPAN_PORTABLE=1 (npm run bundle) builds for any
// x86-64-v2 machine and links libstdc++ and libgcc statically, so the addons load elsewhere.
const portable = process.env.SPAN_PORTABLE === '1'
const what = process.argv[2] ?? 'cflags'
const x64 = process.arch === 'x64'
const flags = {
  cflags: portable ? (x64 ? ['-march=x86-64-v2', '-mtune=generic'] : []) : ['-march=native'],
  ldflags: portable && process.platform === 'linux' ? ['-static-libstdc++', '-static-libgcc'] : [],
}[what] ?? []
process.stdout.write(`${flags.join(' ')}\n`)
