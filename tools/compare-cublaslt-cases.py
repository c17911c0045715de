#!/usr/bin/env python3
"""Runs the saved cuBLASLt cases (fixtures/cuda/cublaslt-cases.json, made by
tools/make-cublaslt-cases.ts on the stand-in) through lt-run against a libcublasLt, and compares
statuses and outputs with the stand-in's. On a GPU machine (tools/gpu-check.sh) that is the real
library with the real driver: it shows where the stand-in's semantics differ from cuBLASLt's.
Here (no GPU) it runs against the stand-in itself, which checks the plumbing.

  compare-cublaslt-cases.py LT_RUN LIBCUBLASLT [LIBCUDA] [--fixture PATH] [--json OUT]

LT_RUN is native/cuda/standin/cublaslt/lt-run.cc built (g++ -std=c++17 lt-run.cc -ldl); with
LIBCUDA (libcuda.so.1) buffers go to device memory. One line per case ("ok", "STATUS" when the
statuses differ, "DIFF" when a value is outside the case's tolerance), then
"N passed, N failed"; exit 1 on any difference. Python 3 standard library only."""
import base64
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, '..', 'fixtures', 'cuda', 'cublaslt-cases.json')


def decode(kind, raw):
    if kind == 14:  # CUDA_R_16BF
        return [struct.unpack('<f', struct.pack('<I', h << 16))[0] for (h,) in struct.iter_unpack('<H', raw)]
    return [v for (v,) in struct.iter_unpack('<f', raw)]


def compare(case, got_dir):
    """None when the outputs agree within the case's tolerance, else the first difference."""
    tol = case['tolerance']
    for name, want in case['outputs'].items():
        path = os.path.join(got_dir, name + '.bin')
        if not os.path.exists(path):
            return '%s not written' % name
        raw = open(path, 'rb').read()
        exp = decode(want['type'], base64.b64decode(want['base64']))
        got = decode(want['type'], raw)
        if len(got) != len(exp):
            return '%s: %d elements, stand-in %d' % (name, len(got), len(exp))
        for i, (g, e) in enumerate(zip(got, exp)):
            ulp = abs(e) * 2.0 ** -7 * tol['bf16Ulps']
            same_nan = math.isnan(g) and math.isnan(e)
            if not same_nan and not abs(g - e) <= tol['abs'] + ulp:
                return '%s[%d] = %r, stand-in %r (tolerance %g)' % (name, i, g, e, tol['abs'] + ulp)
    return None


def run_case(lt_run, lib, cuda, case):
    with tempfile.TemporaryDirectory() as d:
        text = os.path.join(d, 'case.txt')
        open(text, 'w').write(case['text'])
        args = [lt_run, lib, text, d] + ([cuda] if cuda else [])
        r = subprocess.run(args, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return 'FAIL', 'lt-run exit %d: %s' % (r.returncode, r.stderr.strip()[:200])
        got = dict(line.split()[:2] for line in r.stdout.splitlines() if line.startswith(('heuristic', 'matmul')))
        statuses = (int(got.get('heuristic', -99)), int(got.get('matmul', -99)))
        if statuses != (case['heuristic'], case['status']):
            return 'STATUS', 'heuristic, matmul = %s, stand-in %s' % (statuses, (case['heuristic'], case['status']))
        diff = compare(case, d)
        return ('DIFF', diff) if diff else ('ok', '')


def main(argv):
    args = [a for a in argv if not a.startswith('--')]
    opt = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith('--')}
    args = [a for a in args if a not in opt.values()]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    lt_run, lib, cuda = args[0], args[1], (args[2] if len(args) > 2 else None)
    cases = json.load(open(opt.get('--fixture', FIXTURE)))['cases']
    results = []
    for case in cases:
        verdict, why = run_case(lt_run, lib, cuda, case)
        results.append({'name': case['name'], 'verdict': verdict, 'why': why})
        print('%s %s%s' % (verdict, case['name'], (': ' + why) if why else ''))
    bad = sum(1 for r in results if r['verdict'] != 'ok')
    if '--json' in opt:
        json.dump({'library': lib, 'results': results}, open(opt['--json'], 'w'), indent=1)
    print('%d passed, %d failed' % (len(results) - bad, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
