// AutoTokenizer.from_pretrained(span checkpoint) gives `span tokenize`'s ids (issue 34): the fast
// tokenizer transformers builds from the files span writes beside the weights (vocab.txt,
// tokenizer_config.json with do_lower_case, special_tokens_map.json), on the tokenizer fixtures
// (test/fixtures-golden/tokenizer-adversarial.jsonl, and WikiText-2's valid lines where the shared
// data is), with Google's cased and uncased BERT vocabularies (shared data) and the repository's
// own fixtures/vocab.txt (texts with lone surrogates aside: no UTF-8 file can hold them). The
// tokenizer is called with split_special_tokens=True: by default transformers turns "[MASK]"
// spelled inside the text into the special token, where span and BERT's own tokenizer read text
// as text (the second test shows that this is the only difference). span tokenize runs with the checkpoint's vocab.txt and no casing flag, so
// the casing comes from the same tokenizer_config.json transformers reads.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, python, titled, version} from '../helpers/interop.js'
import {ROOT, runSpan} from '../helpers/spawn.js'
import {missingShared, sharedPath} from '../helpers/shared-data.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {presetConfig} from '../../src/core/model/config.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {loadVocab} from '../../src/core/text/vocab.js'

const why = lacking('transformers', 'tokenizers')
const tmp = mkdtempSync(join(tmpdir(), 'span-interop-tok-'))
const adversarial = readFileSync(join(ROOT, 'test', 'fixtures-golden', 'tokenizer-adversarial.jsonl'), 'utf8')
  .trimEnd()
  .split('\n')
  .map((l) => JSON.parse(l) as string)
const wiki = missingShared('wikitext/wikitext-2.valid.txt')
  ? []
  : readFileSync(sharedPath('wikitext', 'wikitext-2.valid.txt'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .slice(0, 400)
// the 3 texts with lone surrogates have no UTF-8 form: no file holds them, and Rust's tokenizers take none
const texts = [...adversarial, ...wiki].filter((t) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(t))
const VOCABS: [string, string, string | null][] = [
  ['bert-base-cased', sharedPath('vocab', 'bert-base-cased.txt'), missingShared('vocab/bert-base-cased.txt')],
  ['bert-base-uncased', sharedPath('vocab', 'bert-base-uncased.txt'), missingShared('vocab/bert-base-uncased.txt')],
  ['fixtures/vocab.txt', join(ROOT, 'fixtures', 'vocab.txt'), null],
]
const results: Record<
  string,
  {ours: number[][]; theirs: {class: string; fast: boolean; lower: boolean; ids: number[][]; default: number[][]}; cased: boolean}
> = {}

/** span tokenize's ids per text: one JSON record per text (--field), its lines' ids joined. */
function spanIds(vocab: string): number[][] {
  const input = join(tmp, 'texts.ndjson')
  writeFileSync(input, texts.map((t) => JSON.stringify({text: t})).join('\n') + '\n')
  const r = runSpan(['tokenize', input, '--field', 'text', '--vocab', vocab])
  expect(r.code, r.stderr).toBe(0)
  const ids: number[][] = texts.map(() => [])
  for (const l of r.stdout.trim().split('\n').slice(1)) {
    const rec = JSON.parse(l) as {doc: number; ids: number[]}
    ids[rec.doc].push(...rec.ids)
  }
  return ids
}

beforeAll(async () => {
  if (why) return
  await initBackend('cpu')
  const jobs = []
  for (const [name, path, absent] of VOCABS) {
    if (absent) continue
    const dir = join(tmp, name.replace(/\W/g, '-'))
    const vocab = loadVocab(path)
    const model = SpanBertForPreTraining.init(
      presetConfig('tiny', vocab.tokens.length, {num_hidden_layers: 1, hidden_size: 8, num_attention_heads: 1, intermediate_size: 8}),
      1,
    )
    await saveCheckpoint(dir, model, path) // the checkpoint span writes: the weights and the tokenizer's files
    model.dispose()
    results[name] = {ours: spanIds(join(dir, 'vocab.txt')), theirs: {class: '', fast: false, lower: false, ids: [], default: []}, cased: vocab.cased}
    jobs.push({job: 'tokenize', dir, texts})
  }
  const answers = JSON.parse(python('hf.py', [], JSON.stringify(jobs))) as (typeof results)[string]['theirs'][]
  for (const [name, , absent] of VOCABS) if (!absent) results[name].theirs = answers.shift()!
}, 600_000)

describe.skipIf(why !== null)(titled(`AutoTokenizer (${version('transformers')}, ${version('tokenizers')}) on span's checkpoints`, why), () => {
  it.each(VOCABS)("%s: the fast tokenizer, with span's casing, gives span tokenize's ids on every fixture text", (name, _, absent) => {
    if (absent) return void console.log(`skipped ${name}: ${absent}`)
    const {ours, theirs, cased} = results[name]
    expect(theirs.fast).toBe(true)
    expect(theirs.class).toMatch(/^Bert(Tokenizer)?(Fast)?$|^BertTokenizerFast$/)
    expect(theirs.lower).toBe(!cased)
    const differ = texts.map((t, i) => ({t, i})).filter(({i}) => ours[i].join() !== theirs.ids[i].join())
    expect(differ.map(({t, i}) => `${JSON.stringify(t)}: span ${ours[i].join()} transformers ${theirs.ids[i].join()}`)).toEqual([])
    expect(ours.flat().length).toBeGreaterThan(texts.length)
  })

  it.each(VOCABS)(
    '%s: called without split_special_tokens, transformers differs only where the text spells a special token ([CLS], [MASK], …)',
    (name, _, absent) => {
      if (absent) return void console.log(`skipped ${name}: ${absent}`)
      const {ours, theirs} = results[name]
      const differ = texts.filter((_, i) => ours[i].join() !== theirs.default[i].join())
      expect(differ.length).toBeGreaterThan(0)
      for (const t of differ) expect(t).toMatch(/\[(CLS|SEP|MASK|UNK|PAD)\]/)
    },
  )
})
