#!/usr/bin/python3
"""
Reference values for prompt variants compared as arms (core/scoring/variant-arms.ts with
core/scoring/report.ts): a run of two models x two prompt variants over the same items, each arm
(model, variant) paired with every other by item, computed here independently with scipy (paired t
test, t quantiles, sem) and statsmodels (exact McNemar, Holm). Writes
test/scoring/fixtures/variant-arms.json; test/scoring/variant-arms.test.ts feeds the same cells to
the report and compares every figure to 1e-9.

Run with Debian's python3 (apt-get install -y python3-scipy python3-statsmodels):
    /usr/bin/python3 scripts/variant-reference.py
The data are drawn from a fixed seed, so re-running gives the same file.
Runs on: Python 3 with scipy and statsmodels (a developer's tool; CI reads only its output).
"""
import json
import os
from itertools import combinations

import numpy as np
import statsmodels.api as sm
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

rng = np.random.default_rng(20261201)
OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'scoring', 'fixtures', 'variant-arms.json')


def case(name, models, variants, items, epochs, rates, gaps):
    """Pass/fail cells of every arm on every item and epoch, bar the (arm, item) pairs in `gaps`."""
    vignettes = [{'vignetteId': f'{v}:t{i + 1}', 'variant': v, 'item': f't{i + 1}'} for v in variants for i in range(items)]
    cells = []
    values = {}
    for m in models:
        for v in variants:
            arm = f'{m} · {v}'
            xs = {}
            for i in range(items):
                if (arm, i) in gaps:
                    continue
                passes = rng.random(epochs) < rates[arm]
                for e in range(epochs):
                    cells.append({'model': m, 'vignetteId': f'{v}:t{i + 1}', 'epoch': e + 1, 'value': float(passes[e]), 'passed': bool(passes[e])})
                xs[i] = float(passes.mean())
            values[arm] = xs
    order = rng.permutation(len(cells))
    cells = [cells[k] for k in order]
    arms = [f'{m} · {v}' for m in models for v in variants]
    rows = [{'model': a, 'n': len(values[a]), 'mean': float(np.mean(list(values[a].values())))} for a in arms]
    pairs = []
    for a, b in combinations(arms, 2):
        both = sorted(set(values[a]) & set(values[b]))
        xa = np.array([values[a][i] for i in both])
        xb = np.array([values[b][i] for i in both])
        d = xa - xb
        n = len(d)
        if epochs == 1:
            only_a = int(np.sum((xa == 1) & (xb == 0)))
            only_b = int(np.sum((xa == 0) & (xb == 1)))
            p = float(mcnemar([[0, only_a], [only_b, 0]], exact=True).pvalue)
            pairs.append({'a': a, 'b': b, 'n': n, 'diff': float(d.mean()), 'p_value': p, 'test': 'mcnemar_exact'})
        else:
            se = float(stats.sem(d))
            h = float(stats.t.ppf(0.975, n - 1)) * se
            p = float(stats.ttest_rel(xa, xb).pvalue)
            pairs.append({'a': a, 'b': b, 'n': n, 'diff': float(d.mean()), 'stderr': se, 'ci95': [float(d.mean()) - h, float(d.mean()) + h], 'p_value': p, 'test': 'paired_t'})
    adjusted = multipletests([p['p_value'] for p in pairs], method='holm')[1]
    for p, q in zip(pairs, adjusted):
        p['p_holm'] = float(q)
    return {'name': name, 'models': models, 'variants': variants, 'epochs': epochs, 'vignettes': vignettes, 'cells': cells, 'arms': rows, 'pairs': pairs}


def main():
    rates = {'m1 · A': 0.85, 'm1 · B': 0.55, 'm2 · A': 0.7, 'm2 · B': 0.65}
    fixture = {
        'made_by': 'scripts/variant-reference.py',
        'versions': {'scipy': __import__('scipy').__version__, 'statsmodels': sm.__version__, 'numpy': np.__version__},
        'cases': [
            case('two models x two variants, K = 3, some items unanswered', ['m1', 'm2'], ['A', 'B'], 60, 3, rates,
                 {('m2 · B', 4), ('m2 · B', 17), ('m1 · A', 30)}),
            case('one model x two variants, K = 1 (exact McNemar)', ['m1'], ['A', 'B'], 80, 1, rates, set()),
        ],
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write('\n')


if __name__ == '__main__':
    main()
