// Issue 36, cause 2: a training run checks every flag, input and saved state before it makes,
// locks or names its run directory, and before it trains (pretrain and every finetune task):
// a broken span-run.json is refused before a step, a usage or data error without --out leaves no
// runs/ and says one line (no "this run goes to" first), and a start refused under mpirun leaves
// no .span.lock. Through bin/run.js processes (dist/ must be built).
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {distAddonPath} from '../../src/core/dist/addon.js'
import {BIN, pool, spanAsync} from '../helpers/spawn.js'
import {litbankDoc} from '../core/tasks/coref-helpers.js'
import {writeBlocks} from '../core/train/helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-checks-first-'))
const TINY = '--preset tiny --layers 1 --hidden 16 --heads 2 --batch-size 2 --backend wasm'
const SQUAD = join(BIN, '..', '..', 'fixtures', 'squad-demo', 'dev.json')
const run = (args: string, cwd = tmp) => spanAsync(args.split(' ').filter(Boolean), cwd)
const lines = (stderr: string) => stderr.split('\n').filter((l) => l !== '')

/** Each finetune task: a training file (valid) and its own flags. */
const TASKS: Record<string, {file: string; text: string; flags?: string}> = {
  glue: {file: 'mrpc.tsv', text: 'Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tthe fox\tthe fox\n0\t3\t4\tthe dog\ta cat\n', flags: '--task mrpc'},
  squad: {file: SQUAD, text: ''},
  ner: {file: 'ner.txt', text: '-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n'},
  tacred: {
    file: 'rel.jsonl',
    text: JSON.stringify({token: ['Bill', 'works', 'for', 'Acme'], subj_start: 0, subj_end: 0, obj_start: 3, obj_end: 3, relation: 'r'}) + '\n',
  },
  nli: {file: 'nli.jsonl', text: JSON.stringify({premise: 'a fox', hypothesis: 'a fox', label: 'entailment'}) + '\n'},
  swag: {file: 'swag.csv', text: 'sent1,sent2,ending0,ending1,ending2,ending3,label\nthe man,he,runs,sits,eats,sleeps,0\n'},
  mrqa: {file: 'mrqa.jsonl', text: '{"header": {"dataset": "x"}}\n'},
  coref: {file: 'coref.conll', text: litbankDoc('a', 2)},
}

beforeAll(() => {
  writeBlocks(join(tmp, 'blocks.ndjson'), 40, 1)
  for (const t of Object.values(TASKS)) if (t.text) writeFileSync(join(tmp, t.file), t.text)
  for (const d of ['usage', 'data']) mkdirSync(join(tmp, d))
})

describe('a run checks before it does anything', () => {
  it('pretrain --resume with an empty or truncated span-run.json is refused before a step: no new checkpoint, no best/', async () => {
    expect((await run(`pretrain blocks.ndjson ${TINY} --max-steps 3 --stop-at 1 --out pre`)).code).toBe(0)
    for (const text of ['', '{"format":"span-run/1","checkpoints":[']) {
      writeFileSync(join(tmp, 'pre', 'span-run.json'), text)
      const r = await run('pretrain --resume pre --stop-at 2 --eval blocks.ndjson')
      expect(r.code, r.stderr).toBe(1)
      expect(lines(r.stderr)).toEqual([`span pretrain: pre/span-run.json: not a span run manifest (span-run/1); move it away or restore it`])
      expect(r.stdout).toBe('')
      expect(readdirSync(join(tmp, 'pre')).sort()).toEqual(['checkpoint-1', 'span-run.json'])
    }
  }, 120_000)

  it('finetune --resume with a truncated span-run.json is refused before a step', async () => {
    expect(
      (await run(`finetune squad --train ${SQUAD} --preset tiny --backend wasm --max-len 64 --max-query-len 16 --batch-size 2 --stop-at 1 --out ft`)).code,
    ).toBe(0)
    writeFileSync(join(tmp, 'ft', 'span-run.json'), '{"format":"span-run/1"')
    const r = await run('finetune squad --resume ft --stop-at 2')
    expect(r.code, r.stderr).toBe(1)
    expect(lines(r.stderr)).toEqual([`span finetune squad: ft/span-run.json: not a span run manifest (span-run/1); move it away or restore it`])
    expect(readdirSync(join(tmp, 'ft')).sort()).toEqual(['checkpoint-1', 'span-run.json'])
  }, 120_000)

  it('a usage or data error without --out: one line, no run directory announced, no runs/ left (pretrain and every finetune task)', async () => {
    const jobs: {name: string; cwd: string; args: string; code: number}[] = [
      {name: 'pretrain --lr -1', cwd: 'usage', args: `pretrain ../blocks.ndjson ${TINY} --lr -1`, code: 2},
      {name: 'pretrain --effective-batch huge', cwd: 'usage', args: `pretrain ../blocks.ndjson ${TINY} --effective-batch 99999999999999999999`, code: 2},
      {name: 'pretrain no data', cwd: 'data', args: `pretrain ../no-such.ndjson ${TINY}`, code: 1},
    ]
    for (const [task, t] of Object.entries(TASKS)) {
      const file = t.file.startsWith('/') ? t.file : `../${t.file}`
      jobs.push({name: `finetune ${task} without --init`, cwd: 'usage', args: `finetune ${task} --train ${file} ${t.flags ?? ''}`.trim(), code: 2})
      jobs.push({
        name: `finetune ${task} missing --train file`,
        cwd: 'data',
        args: `finetune ${task} --train ../no-such ${t.flags ?? ''} --preset tiny --backend wasm`,
        code: 1,
      })
    }
    const results = await pool(
      jobs.map((j) => () => run(j.args, join(tmp, j.cwd))),
      2,
    )
    const bad = results.flatMap((r, i) => {
      const ls = lines(r.stderr)
      const ok = r.code === jobs[i].code && ls.length === 1 && !/this run goes to/.test(r.stderr)
      return ok ? [] : [`${jobs[i].name}: exit ${r.code}, ${JSON.stringify(r.stderr.slice(0, 300))}`]
    })
    expect(bad).toEqual([])
    expect(readdirSync(join(tmp, 'usage'))).toEqual([])
    expect(readdirSync(join(tmp, 'data'))).toEqual([])
  }, 300_000)
})

const hasMpirun = spawnSync('mpirun', ['--version'], {encoding: 'utf8'}).status === 0
const mpiWhy = !hasMpirun ? 'mpirun not found' : !existsSync(distAddonPath()) ? 'span_dist addon not built' : null

describe.skipIf(mpiWhy !== null)(`under mpirun -np 2${mpiWhy ? ` (skipped: ${mpiWhy})` : ''}`, () => {
  const mpirun = (args: string) => {
    const env = {...process.env, OMPI_ALLOW_RUN_AS_ROOT: '1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: '1', OMPI_MCA_rmaps_base_oversubscribe: '1'}
    const r = spawnSync('mpirun', ['-np', '2', process.execPath, BIN, ...args.split(' ')], {cwd: tmp, env, encoding: 'utf8', timeout: 120_000})
    return {code: r.status, spans: lines(r.stderr).filter((l) => /span pretrain: /.test(l) && !/: (config|model|memory plan|effective batch|to stop)/.test(l))}
  }

  it('a start refused on rank 0 after it took the run directory (a bad --tensorboard) leaves no .span.lock and no directory', () => {
    writeFileSync(join(tmp, 'afile'), '')
    const r = mpirun(`pretrain blocks.ndjson ${TINY} --max-steps 2 --out mp --tensorboard afile/tb`)
    expect(r.code).not.toBe(0)
    expect(r.spans).toEqual([
      `span pretrain: rank 0 failed: ${join(tmp, 'afile', 'tb')}: not a directory (a path component is a file) (ENOTDIR); ending the job`,
    ])
    expect(existsSync(join(tmp, 'mp'))).toBe(false)
  }, 150_000)

  it('one line for the job: a usage error (said by rank 0 alone), a missing file in span words (no Node ENOENT text)', () => {
    const usage = mpirun(`pretrain blocks.ndjson ${TINY} --lr -1 --out mp2`)
    expect(usage.code).toBe(2)
    expect(usage.spans).toEqual(['span pretrain: --lr must be a number in [0, 10], got -1'])
    const missing = mpirun(`pretrain no-such.ndjson ${TINY} --out mp3`)
    expect(missing.code).not.toBe(0)
    expect(missing.spans).toEqual([`span pretrain: rank 0 failed: ${join(tmp, 'no-such.ndjson')}: no such file or directory (ENOENT); ending the job`])
    expect(existsSync(join(tmp, 'mp2')) || existsSync(join(tmp, 'mp3'))).toBe(false)
  }, 150_000)
})
