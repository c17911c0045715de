"""Makes fixtures/mrqa/golden-eval.json: hand-built MRQA datasets and predictions and what the
official mrqa_official_eval.py prints for them. span's port (src/core/metrics/mrqa.ts) is tested
against it (test/core/metrics/mrqa.test.ts).

The official script is MIT-licensed but kept out of this repository; get it and run:
  git show b86bbcc63352786f0ca246b76191f062dce4b52b:mrqa_official_eval.py > /tmp/mrqa_official_eval.py
    (github.com/mrqa/MRQA-Shared-Task-2019, md5 dd2a0f23472603e8580c25de574f9d38)
  MRQA_EVAL=/tmp/mrqa_official_eval.py python3 tools/make-mrqa-goldens.py
The script imports allennlp only for cached_path (URL download); a stub that returns the path
is put on PYTHONPATH. Each case's data is written gzipped, as the script reads it.
"""
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'fixtures', 'mrqa', 'golden-eval.json')
MD5 = 'dd2a0f23472603e8580c25de574f9d38'


def ctx(*qas):
    return {'context': 'ctx', 'qas': [{'qid': q, 'question': 'q?', 'answers': a} for q, a in qas]}


def cases():
    uni = ctx(('u1', ['“Paris”']), ('u2', ['the Eiffel—Tower']), ('u3', ['«Le Monde»']), ('u4', ['São Paulo']),
              ('u5', ['2,000 km']), ('u6', ['¿Qué?']), ('u7', ["l'état"]), ('u8', ['An apple a day']))
    return [
        ('unicode-punctuation', [uni], {'u1': 'Paris', 'u2': 'Eiffel Tower', 'u3': 'Le Monde', 'u4': 'sao paulo',
                                        'u5': '2000 km', 'u6': 'Qué', 'u7': 'letat', 'u8': 'apple day'}, False),
        ('missing-and-extra-ids', [ctx(('a', ['red']), ('b', ['blue sky'])), ctx(('c', ['green']))],
         {'a': 'red', 'b': 'the blue', 'zz': 'red', 'yy': ''}, False),
        ('missing-skipped', [ctx(('a', ['red']), ('b', ['blue sky'])), ctx(('c', ['green']))],
         {'a': 'red', 'b': 'the blue', 'zz': 'red'}, True),
        ('several-answers-and-repeated-qid', [ctx(('a', ['x y z', 'y']), ('b', ['one']))], {'a': 'y z', 'b': 'two'}, False),
        ('repeated-qid-last-answers-win', [ctx(('a', ['first'])), ctx(('a', ['second']))], {'a': 'second'}, False),
        ('empty-prediction', [ctx(('a', ['the'])), ctx(('b', ['cat']))], {'a': '', 'b': ''}, False),
    ]


def run(script, stub, data, preds, skip):
    with tempfile.TemporaryDirectory() as d:
        dp, pp = os.path.join(d, 'data.jsonl.gz'), os.path.join(d, 'pred.json')
        with gzip.open(dp, 'wt', encoding='utf-8') as f:
            f.write(json.dumps({'header': {'dataset': 'hand', 'split': 'dev'}}) + '\n')
            for c in data:
                f.write(json.dumps(c) + '\n')
        with open(pp, 'w', encoding='utf-8') as f:
            json.dump(preds, f)
        args = ['python3', script, dp, pp] + (['--skip-no-answer'] if skip else [])
        p = subprocess.run(args, capture_output=True, env={**os.environ, 'PYTHONPATH': stub}, check=True)
        return p.stdout.decode('utf-8')


def main():
    script = os.environ.get('MRQA_EVAL')
    if not script or hashlib.md5(open(script, 'rb').read()).hexdigest() != MD5:
        sys.exit('set MRQA_EVAL to the official mrqa_official_eval.py (md5 %s); see this file\'s docstring' % MD5)
    with tempfile.TemporaryDirectory() as stub:
        os.makedirs(os.path.join(stub, 'allennlp', 'common'))
        for p in ('allennlp/__init__.py', 'allennlp/common/__init__.py'):
            open(os.path.join(stub, p), 'w').close()
        with open(os.path.join(stub, 'allennlp', 'common', 'file_utils.py'), 'w') as f:
            f.write('def cached_path(p):\n    return p\n')
        out = []
        for name, data, preds, skip in cases():
            stdout = run(script, stub, data, preds, skip)
            out.append({'name': name, 'data': data, 'predictions': preds, 'skip_no_answer': skip,
                        'expected': json.loads(stdout.strip().split('\n')[-1]), 'stdout': stdout})
    with open(OUT, 'w', encoding='utf-8') as f:
        json.dump({'note': 'Made by tools/make-mrqa-goldens.py running the official script; do not edit.', 'cases': out}, f, indent=1, ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
