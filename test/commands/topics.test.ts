// The help topics of package.json's oclif section and the README's command table name every task
// that `span finetune`, `span predict` and `span eval` have (from src/commands/), and Span
// Fine-tuning where a task has it.
import {readFileSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

const root = join(__dirname, '..', '..')
const topics = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).oclif.topics as Record<string, {description: string}>
const readme = readFileSync(join(root, 'README.md'), 'utf8')
const tasks = (topic: string) =>
  readdirSync(join(root, 'src', 'commands', topic))
    .filter((f) => f.endsWith('.ts') && f !== 'compare.ts')
    .map((f) => f.replace(/\.ts$/, ''))

describe('topics and README name every task', () => {
  it.each(['finetune', 'predict', 'eval'])('%s', (topic) => {
    expect(tasks(topic).length).toBeGreaterThanOrEqual(7)
    for (const t of tasks(topic)) {
      expect(topics[topic].description).toMatch(new RegExp(`\\b${t}\\b`))
      const row = readme.split('\n').find((l) => new RegExp(`^\\| \`span (${topic} ${t}|[a-z|\\\\]*\\b${topic}\\b[a-z|\\\\]* ${t})\``).test(l))
      expect(row, `README row for span ${topic} ${t}`).toBeDefined()
    }
  })

  it('Span Fine-tuning: the finetune topic, and the README rows of glue, nli and ner', () => {
    expect(topics.finetune.description).toMatch(/Span Fine-tuning/)
    for (const t of ['glue', 'nli', 'ner']) {
      const row = readme.split('\n').find((l) => l.startsWith('| `span finetune') && l.includes(` ${t}\``))
      expect(row, t).toMatch(/--span-ft --dict D/)
    }
  })
})
