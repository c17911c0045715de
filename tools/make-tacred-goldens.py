"""Makes fixtures/tacred/golden-scorer.json: hand-built gold/prediction label lists and what
TACRED's official scorer returns and prints for them. span's port (src/core/metrics/tacred.ts)
is tested against it (test/core/metrics/tacred.test.ts).

The official scorer is Apache-2.0 (Stanford) but is kept out of this repository; get it and run:
  git show 18221efc28be400ad3ec3939f1bbd32ab74b64f5:utils/scorer.py > /tmp/scorer.py
    (github.com/yuhaozhang/tacred-relation, md5 0fe8045dc6653d992108f8e6e4b098eb)
  TACRED_SCORER=/tmp/scorer.py python3 tools/make-tacred-goldens.py
The negative label is the script's module constant NO_RELATION; the `Other` cases (SemEval-2010
Task 8) set it before calling score(), which reads it at call time.
"""
import contextlib
import hashlib
import importlib.util
import io
import json
import os
import random
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'fixtures', 'tacred', 'golden-scorer.json')
MD5 = '0fe8045dc6653d992108f8e6e4b098eb'
NR = 'no_relation'


def cases():
    rng = random.Random(15)
    labels = [NR, 'per:title', 'org:founded_by', 'per:employee_of', 'org:city_of_headquarters']
    semeval = ['Other', 'Cause-Effect(e1,e2)', 'Cause-Effect(e2,e1)', 'Component-Whole(e1,e2)', 'Entity-Origin(e2,e1)']
    out = [
        ('no-positive-prediction', NR, [NR, 'per:title', 'org:founded_by', NR], [NR] * 4),
        ('all-negative', NR, [NR] * 3, [NR] * 3),
        ('labels-absent-from-gold', NR, [NR, 'per:title', NR, 'per:title'], ['org:founded_by', 'per:title', 'per:age', 'per:age']),
        ('perfect', NR, ['per:title', NR, 'org:founded_by'], ['per:title', NR, 'org:founded_by']),
        ('no-positive-gold', NR, [NR, NR], ['per:title', NR]),
        ('wrong-positive-label', NR, ['per:title', 'per:title'], ['per:employee_of', 'per:title']),
    ]
    for i in range(4):
        g = [rng.choice(labels) for _ in range(60)]
        p = [x if rng.random() < 0.6 else rng.choice(labels) for x in g]
        out.append((f'random-{i}', NR, g, p))
    g = [rng.choice(semeval) for _ in range(80)]
    out.append(('semeval-Other', 'Other', g, [x if rng.random() < 0.5 else rng.choice(semeval) for x in g]))
    out.append(('semeval-all-Other', 'Other', g, ['Other'] * len(g)))
    return out


def main():
    path = os.environ.get('TACRED_SCORER')
    if not path or hashlib.md5(open(path, 'rb').read()).hexdigest() != MD5:
        sys.exit('set TACRED_SCORER to the official utils/scorer.py (md5 %s); see this file\'s docstring' % MD5)
    spec = importlib.util.spec_from_file_location('tacred_scorer', path)
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    result = []
    for name, negative, gold, pred in cases():
        scorer.NO_RELATION = negative
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            p, r, f = scorer.score(gold, pred, verbose=True)
        result.append({'name': name, 'negative': negative, 'gold': gold, 'pred': pred,
                       'precision': p, 'recall': r, 'f1': f, 'stdout': buf.getvalue()})
    with open(OUT, 'w', encoding='utf-8') as f:
        json.dump({'note': 'Made by tools/make-tacred-goldens.py running the official scorer; do not edit.', 'cases': result}, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
