#!/usr/bin/env python3
"""Variants of the independent validation generator (../shared/validation/gen.py), to see how the
detector does on traces it was not tuned on: the generator itself is imported and changed in place,
nothing of it is copied here.

  base     gen.py as it is (with --steps, shorter or longer runs)
  noisy    every instance's noise sigma x 1.8
  fleet2   another fleet: 7B decode TP2 with a 1.3x regression, 70B mixed TP8 with phases, 7B prefill
           in form B, a 70B TP4 iteration log with a 1.25x regression, a sampled 70B TP4 decode
           instance, a 7B TP4 mixed instance without kv.*
  fleet3   a third fleet, every instance a combination the other two do not have: 7B decode TP2 with
           phases and light batches (1-64) and a 1.35x regression, 70B mixed TP8 sampled, 7B prefill
           TP2 in form A, a 70B TP8 iteration log with a 1.3x regression, 70B decode TP2 in form B,
           a 7B mixed instance without kv.* and a 1.2x regression
  faults2  another campaign: milder and longer faults (throttles of 500-2,000 steps at 1.5-1.6x,
           contention of 20-400 steps at 1.5-2x, kernel slowdowns 1.5-2.2x) packed closer together;
           throttles beyond 1,200 steps are longer than issue 15 asks the detector to tell from a
           sustained regression

usage: validation_variants.py VARIANT --out DIR [--seed N] [--steps N]
       (STEPLINE_VALIDATION_DIR: where gen.py is; default ../shared/validation beside the repository)
Score the output with gen.py's score.py or `stepline evaluate`, as for gen.py's own traces.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VALIDATION = os.environ.get('STEPLINE_VALIDATION_DIR', os.path.join(HERE, '..', '..', '..', 'shared', 'validation'))
if not os.path.exists(os.path.join(VALIDATION, 'gen.py')):
    sys.exit('validation_variants.py: no gen.py in %s (set STEPLINE_VALIDATION_DIR)' % VALIDATION)
sys.path.insert(0, VALIDATION)
import numpy as np  # noqa: E402
import gen  # noqa: E402

VARIANTS = ('base', 'noisy', 'fleet2', 'fleet3', 'faults2')


def noisy():
    gen.INSTANCES = [(i, m, tp, r, f, lh, s * 1.8, x) for (i, m, tp, r, f, lh, s, x) in gen.INSTANCES]


def fleet2():
    gen.KV_BLOCKS[('7b', 4)] = 36000
    gen.INSTANCES = [
        ('w-dec-7b-a', '7b', 2, 'decode', 'A', (1, 256), 0.03, {'sustained': 1.3}),
        ('w-mix-70b-a', '70b', 8, 'mixed', 'A+phases', (16, 256), 0.025, {}),
        ('w-pre-7b-b', '7b', 1, 'prefill', 'B', (1, 8), 0.04, {}),
        ('w-mix-70b-log', '70b', 4, 'mixed', 'logs', (8, 128), 0.03, {'sustained': 1.25}),
        ('w-dec-70b-bs', '70b', 4, 'decode', 'B-sampled', (16, 300), 0.03, {}),
        ('w-mix-7b-nokv', '7b', 4, 'mixed', 'A-nokv', (2, 64), 0.04, {}),
    ]


def fleet3():
    gen.INSTANCES = [
        ('x-dec-7b-a', '7b', 2, 'decode', 'A+phases', (1, 64), 0.035, {'sustained': 1.35}),
        ('x-mix-70b-bs', '70b', 8, 'mixed', 'B-sampled', (16, 320), 0.02, {}),
        ('x-pre-7b-a', '7b', 2, 'prefill', 'A', (1, 8), 0.03, {}),
        ('x-mix-70b-log', '70b', 8, 'mixed', 'logs', (16, 256), 0.025, {'sustained': 1.3}),
        ('x-dec-70b-b', '70b', 2, 'decode', 'B', (2, 96), 0.04, {}),
        ('x-mix-7b-nokv', '7b', 1, 'mixed', 'A-nokv', (8, 160), 0.03, {'sustained': 1.2}),
    ]


def faults2():
    def campaign(n, extra, rng):
        eps, taken = [], np.zeros(n, bool)
        taken[:n // 8] = True
        sus_from = None
        if extra:
            sus_from = int(n * rng.uniform(0.5, 0.75))
            taken[sus_from - 40:] = True

        def place(length):
            for _ in range(300):
                s = int(rng.integers(0, n - length - 1))
                if not taken[max(0, s - 60):s + length + 60].any():
                    taken[s:s + length] = True
                    return s
            return None

        plan = [('host_stall', 4, (1, 10), 'add', (5, 60)), ('device_contention', 4, (20, 400), 'mul', (1.5, 2.0)),
                ('clock_throttle', 2, (500, 2000), 'mul', (1.5, 1.6)), ('straggler_rank', 4, (1, 2), 'add', (4, 40)),
                ('kernel_slowdown', 3, (20, 150), 'mul', (1.5, 2.2))]
        for typ, count, (l0, l1), op, (v0, v1) in plan:
            for _ in range(count):
                length = int(rng.integers(l0, l1 + 1))
                s = place(length)
                if s is not None:
                    eps.append((s, s + length - 1, typ, op, float(rng.uniform(v0, v1))))
        if 'sustained' in extra:
            eps.append((sus_from, n - 1, 'sustained_regression', 'mul', extra['sustained']))
        return eps
    gen.campaign = campaign


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in VARIANTS:
        sys.exit('usage: validation_variants.py {%s} --out DIR [--seed N] [--steps N]' % ','.join(VARIANTS))
    name = sys.argv.pop(1)
    {'base': lambda: None, 'noisy': noisy, 'fleet2': fleet2, 'fleet3': fleet3, 'faults2': faults2}[name]()
    sys.argv[0] = 'gen.py'
    gen.main()


if __name__ == '__main__':
    main()
