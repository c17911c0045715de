#!/usr/bin/env node
/**
 * Top-1 token accuracy of `span fill`'s three heads (--head both, mlm, sbo) on held-out spans
 * masked by `span mask`: for every span of a masked example whose tokens are all [MASK] (the
 * 80% case of SpanBERT §3.1) and no longer than the SBO head's max_targets, the best filling
 * by the beam search span fill uses (core/model/fill.ts), compared token by token with the
 * original. The other spans of the example stay as span mask left them.
 *
 * The figures in the issue's closing note came from (WikiText-2 valid split by lines: the first
 * 3400 lines to pre-train, the last 360 held out; the bundled fixtures/vocab.txt):
 *   head -n 3400 ../shared/data/wikitext/wikitext-2.valid.txt > train.txt
 *   tail -n 360 ../shared/data/wikitext/wikitext-2.valid.txt > heldout.txt
 *   span tokenize train.txt | span block --len 64 > train.blocks
 *   span tokenize heldout.txt | span block --len 64 | span mask --seed 7 > heldout.masked
 *   span pretrain train.blocks --preset tiny --layers 2 --hidden 64 --heads 2 --intermediate 256 \
 *     --batch-size 16 --max-steps N --lr 2e-3 --warmup W --backend native --out ckpt
 *   npm run build && node bench/fill-accuracy.mjs ckpt heldout.masked
 */
import {readFileSync} from 'node:fs'
import {initBackend} from '../dist/core/engine/backend.js'
import {loadCheckpoint} from '../dist/core/model/checkpoint.js'
import {beamSearch, maskLogProbs} from '../dist/core/model/fill.js'
import {bannedIds} from '../dist/core/model/fill-stream.js'
import {loadVocab} from '../dist/core/text/vocab.js'

const [ckpt, masked] = process.argv.slice(2)
if (!ckpt || !masked) {
  console.error('usage: node bench/fill-accuracy.mjs CHECKPOINT MASKED.ndjson')
  process.exit(2)
}
await initBackend(process.env.BENCH_BACKEND ?? 'native')
const {model, vocabPath} = await loadCheckpoint(ckpt, {objectives: ['mlm', 'sbo']})
const banned = bannedIds(loadVocab(vocabPath).special)
const heads = ['both', 'mlm', 'sbo']
const right = {both: 0, mlm: 0, sbo: 0}
let tokens = 0
let spans = 0
const t0 = Date.now()
for (const line of readFileSync(masked, 'utf8').split('\n').slice(1)) {
  if (!line) continue
  const ex = JSON.parse(line)
  const gold = new Map(ex.targets.map(([p, id]) => [p, id]))
  const runs = ex.spans.filter(([s, e, kind]) => kind === 'mask' && e - s + 1 <= model.config.sbo.max_targets).map(([s, e]) => ({pos: s, len: e - s + 1}))
  if (runs.length === 0) continue
  for (const head of heads) {
    const {lp, V} = maskLogProbs(model, ex.ids, runs, head)
    let row = 0
    for (const r of runs) {
      const [best] = beamSearch(lp, V, row, r.len, 1, 1, banned)
      best.ids.forEach((id, i) => {
        if (id === gold.get(r.pos + i)) right[head]++
      })
      row += r.len
    }
  }
  spans += runs.length
  tokens += runs.reduce((a, r) => a + r.len, 0)
}
model.dispose()
console.log(
  JSON.stringify({
    checkpoint: ckpt,
    masked,
    spans,
    tokens,
    top1: Object.fromEntries(heads.map((h) => [h, Number((right[h] / tokens).toFixed(4))])),
    seconds: (Date.now() - t0) / 1000,
  }),
)
