import {Args, Flags} from '@oclif/core'
import {SpanCommand, ioFlags} from '../cli/base.js'
import {checkChartPath} from '../core/data/chart-file.js'
import {readCurvesFile, writeCurvesSvg} from '../core/plot/files.js'
import {curvesChart, seriesPaint} from '../core/plot/terminal.js'

export default class Plot extends SpanCommand {
  static override summary = "Draw the loss and evaluation curves of a training run's metrics"
  static override description = [
    'Reads the metrics NDJSON that span pretrain and span finetune write on stdout (docs/formats.md#metrics-records) and draws,',
    "against the step, every loss of the training records and of the evaluation records (pre-training's held-out loss)",
    'in one panel, and the evaluation scores (SQuAD exact_match and f1, GLUE accuracy, …) in another.',
    'A text chart on stdout, or with --svg a standalone SVG file (written whole or not at all).',
    "It also reads a TensorBoard event file (--tensorboard DIR of pretrain and finetune; every record's CRC checked): tags `split/key` such as train/loss or dev/f1.",
  ].join(' ')
  static override examples = [
    'span plot metrics.ndjson',
    'span plot metrics.ndjson --svg curves.svg',
    'span plot runs/events.out.tfevents.1700000000.host',
    'span pretrain train.ndjson --out m | tee metrics.ndjson | jq -c .loss',
  ]
  static override args = {file: Args.string({description: 'metrics NDJSON file (default: stdin) or TensorBoard event file', ignoreStdin: true})}
  static override flags = {
    svg: Flags.string({description: 'write the chart to this SVG file instead of drawing it on stdout'}),
    width: Flags.integer({description: "columns of the text chart's plot area (default: fits the terminal, else 60)", min: 10, max: 400}),
    height: Flags.integer({description: 'rows of each panel of the text chart', default: 12, min: 4, max: 100}),
    'max-line-mb': ioFlags['max-line-mb'],
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Plot)
    if (flags.svg) await checkChartPath(flags.svg)
    const curves = await readCurvesFile(args.file ?? '-')
    if (flags.svg) return writeCurvesSvg(flags.svg, curves)
    const tty = process.stdout.isTTY === true
    const width = flags.width ?? (tty ? Math.max(20, Math.min(120, (process.stdout.columns ?? 80) - 14)) : 60)
    const lines = curvesChart(curves, {width, height: flags.height}, seriesPaint(tty))
    await this.withOutput('-', async (w) => {
      for (const line of lines) await w.line(line)
    })
  }
}
