#!/usr/bin/python3
"""
Reference values for core/scoring/statistics.ts, computed by an independent implementation:
scipy (t distribution, paired t test, sem, noncentral t), statsmodels (exact McNemar, Holm,
Wilson's interval, t-test power), the CR2 cluster-robust variance with Bell-McCaffrey degrees of
freedom by its general matrix definition (numpy, scipy.linalg.sqrtm), Tango's paired score
interval with its nuisance parameter maximized numerically, and Krippendorff's alpha from its published coincidence-matrix definition (checked
here against the worked example of Krippendorff, "Computing Krippendorff's Alpha-Reliability",
2011). Writes test/scoring/fixtures/statistics.json; test/scoring/statistics.test.ts compares every
function with it to 1e-9.

Run with Debian's python3 (apt-get install -y python3-scipy python3-statsmodels):
    /usr/bin/python3 scripts/stats-reference.py
The data are drawn from a fixed seed, so re-running gives the same file.
Runs on: Python 3 with scipy and statsmodels (a developer's tool; CI reads only its output).
"""
import json
import math
import os
from fractions import Fraction
from math import comb

import numpy as np
import statsmodels.api as sm
from scipy import linalg, optimize, stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.power import TTestPower
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.multitest import multipletests

rng = np.random.default_rng(20261130)
OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'scoring', 'fixtures', 'statistics.json')


def floats(a):
    return [float(v) for v in a]


def t_ppf(p, df):
    """
    The t quantile, polished by Newton steps on scipy's t CDF. Debian's scipy 1.10 computes t.ppf
    with cephes' stdtrit, which is off by up to ~2e-9 relative (checked against mpmath at 40
    digits); its CDF is accurate to ~1e-16, so solving F(x) = p on it gives the quantile to
    double precision.
    """
    x = float(stats.t.ppf(p, df))
    for _ in range(3):
        x -= (float(stats.t.cdf(x, df)) - p) / float(stats.t.pdf(x, df))
    return x


def t_ppf_cdf():
    quantiles, cdfs = [], []
    for df in [1, 2, 3, 4, 5, 7, 10, 19, 30, 99, 100, 999, 12345, 1e6]:
        for p in [1e-6, 0.001, 0.025, 0.2, 0.5, 0.8, 0.9, 0.975, 0.995, 0.999999]:
            quantiles.append({'p': p, 'df': df, 'q': t_ppf(p, df)})
        for t in [-40.0, -5.0, -2.5, -1.0, -1e-3, 0.0, 0.3, 1.96, 3.0, 12.0]:
            cdfs.append({'t': t, 'df': df, 'cdf': float(stats.t.cdf(t, df))})
    return quantiles, cdfs


def mean_interval(name, xs):
    xs = np.asarray(xs, dtype=float)
    n = len(xs)
    m = float(xs.mean())
    se = float(stats.sem(xs))  # sd with n - 1, over sqrt(n)
    h = t_ppf(0.975, n - 1) * se
    return {'name': name, 'xs': floats(xs), 'mean': m, 'stderr': se, 'ci95': [m - h, m + h]}


def mean_intervals():
    return [
        mean_interval('n = 2', [0.2, 0.9]),
        mean_interval('n = 2 pass/fail', [0.0, 1.0]),
        mean_interval('all equal', [0.7] * 10),
        mean_interval('ties', [0.5, 0.5, 0.25, 0.25, 1.0, 1.0, 0.0, 0.5]),
        mean_interval('uniform, n = 50', rng.random(50)),
        mean_interval('pass/fail, n = 200', rng.binomial(1, 0.7, 200).astype(float)),
        mean_interval('thirds (K = 3 means), n = 300', rng.binomial(3, 0.6, 300) / 3),
        mean_interval('graded, n = 5000', rng.beta(2, 5, 5000)),
    ]


def cr2(xs, groups):
    """
    CR2 (Bell and McCaffrey 2002) for the mean, by the general definition, not the closed form the
    TypeScript uses: X = 1, H = X(X'X)^-1 X', A_g = (I - H_gg)^(-1/2) (symmetric square root),
    V = (X'X)^-1 sum_g X_g' A_g e_g e_g' A_g X_g (X'X)^-1, and the Bell-McCaffrey degrees of freedom
    (sum of eigenvalues)^2 / sum of their squares, for G'G with G_g = (I - H)_g' A_g X_g (X'X)^-1.
    Returns (stderr, df, clusters, largest cluster's share). statsmodels has no CR2.
    """
    xs = np.asarray(xs, dtype=float)
    groups = np.asarray(groups)
    n = len(xs)
    X = np.ones((n, 1))
    bread = np.linalg.inv(X.T @ X)
    H = X @ bread @ X.T
    e = xs - xs.mean()
    IH = np.eye(n) - H
    meat = 0.0
    cols = []
    labels = sorted(set(groups.tolist()))
    for g in labels:
        idx = np.where(groups == g)[0]
        A = np.real(linalg.sqrtm(np.linalg.inv(np.eye(len(idx)) - H[np.ix_(idx, idx)])))
        u = X[idx].T @ A @ e[idx]
        meat += float(u @ u)
        cols.append((IH[:, idx] @ A @ X[idx] @ bread)[:, 0])
    G = np.column_stack(cols)
    lam = np.linalg.eigvalsh(G.T @ G)
    df = float(lam.sum() ** 2 / (lam ** 2).sum())
    se = math.sqrt(float(bread[0, 0] ** 2 * meat))
    sizes = [int((groups == g).sum()) for g in labels]
    return se, df, len(labels), max(sizes) / n


def clustered(name, xs, groups):
    """
    The report's clustered mean: CR2 with Bell-McCaffrey df, floored at the unclustered SE only
    where CR2 is not trusted: one cluster holds more than half the values, or CR2 is zero or
    rounding noise (<= 1e-12 max(1, |mean|)) on data that vary. No interval (too few clusters)
    under 3 degrees of freedom.
    """
    xs = np.asarray(xs, dtype=float)
    se_cr2, df_bm, c, largest = cr2(xs, groups)
    iid = float(stats.sem(xs))
    m = float(xs.mean())
    untrusted = largest > 0.5 or se_cr2 <= 1e-12 * max(1.0, abs(m))
    floored = bool(untrusted and se_cr2 < iid)
    se = iid if floored else se_cr2
    about = {
        'name': name, 'xs': floats(xs), 'clusters': [int(g) for g in groups],
        'mean': m, 'cr2_stderr': se_cr2, 'bm_df': df_bm, 'largest_share': largest, 'floored': floored,
    }
    if not df_bm >= 3 - 1e-9:
        return {**about, 'stderr': None, 'ci95': None, 'df': None, 'too_few_clusters': True}
    h = t_ppf(0.975, df_bm) * se
    return {**about, 'stderr': se, 'ci95': [m - h, m + h], 'df': df_bm, 'too_few_clusters': False}


def clustereds():
    out = [
        clustered('two clusters', [0.1, 0.5, 0.9, 0.3, 0.7], [0, 0, 1, 1, 1]),
        clustered('unequal sizes, a singleton', [0.1, 0.5, 0.9, 0.3, 0.7, 1.0, 0.0, 0.2, 0.6], [3, 3, 1, 1, 2, 2, 2, 2, 7]),
        clustered('pass/fail with ties', [1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]),
    ]
    groups = rng.integers(0, 12, 400)
    effect = rng.normal(0, 0.15, 12)
    xs = np.clip(0.6 + effect[groups] + rng.normal(0, 0.2, 400), 0, 1)
    out.append(clustered('400 vignettes in 12 correlated clusters', xs, groups))
    uneven = np.array([0] * 30 + [1] * 3 + [2] * 3 + [3] * 2 + [4] * 2)
    out.append(clustered('one cluster holds most vignettes', np.clip(0.5 + rng.normal(0, 0.3, 40), 0, 1), uneven))
    # Equal cluster means: CR2 alone is 0 although the data vary; the unclustered SE is the floor.
    out.append(clustered('equal cluster means (floored)', [0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 0.5], [0, 0, 1, 1, 2, 2, 3, 3]))
    # One cluster of 51 in 100, the rest single: it dominates, yet its df (3.7) still allows an interval.
    out.append(clustered('one cluster of 51 in 100, the rest single', [((i * 37) % 100) / 100 for i in range(100)], [0] * 51 + list(range(1, 50))))
    return out


def paired(name, a, b):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = a - b
    n = len(d)
    se = float(stats.sem(d))
    t_res = stats.ttest_rel(a, b)
    h = t_ppf(0.975, n - 1) * se
    p = float(t_res.pvalue)
    return {
        'name': name, 'a': floats(a), 'b': floats(b), 'n': n, 'diff': float(d.mean()), 'stderr': se,
        'ci95': [float(d.mean()) - h, float(d.mean()) + h],
        # scipy gives NaN when every d_i is equal (0/0); the tested convention is in the test itself.
        'p_value': None if math.isnan(p) else p,
        'min_detectable_diff': mde_lambda(n - 1) * se,
    }


def t_power(lam, df):
    crit = t_ppf(0.975, df)
    return float(stats.nct.sf(crit, df, lam) + stats.nct.cdf(-crit, df, lam))


def mde_lambda(df):
    """The noncentrality at which the two-sided 5 % t test has 80 % power (scipy's noncentral t)."""
    return optimize.brentq(lambda lam: t_power(lam, df) - 0.8, 0.5, 60, xtol=1e-14, rtol=1e-15)


def mde_lambdas():
    out = []
    for df in [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 23, 59, 99, 1000, 2.5, 7.3]:
        lam = mde_lambda(df)
        if float(df).is_integer():
            # statsmodels' power solver, on the standardized effect d = lambda / sqrt(n), agrees
            # to its own tolerance.
            d = TTestPower().solve_power(effect_size=None, nobs=df + 1, alpha=0.05, power=0.8, alternative='two-sided')
            assert abs(d * math.sqrt(df + 1) - lam) < 1e-4, (df, d, lam)
        out.append({'df': df, 'lambda': lam, 'central': t_ppf(0.975, df) + t_ppf(0.8, df)})
    return out


def wilsons():
    out = []
    for k, n in [(0, 1), (1, 1), (0, 5), (5, 5), (3, 10), (10, 10), (19, 20), (24, 24), (1, 60), (48, 60), (700, 1000), (2.5, 7)]:
        lo, hi = proportion_confint(k, n, alpha=0.05, method='wilson')
        out.append({'passes': k, 'n': n, 'ci95': [float(lo), float(hi)]})
    return out


def tango_score(only_a, only_b, n, delta):
    """
    Tango's score statistic with the nuisance P(only b passes) maximized numerically (scipy's
    bounded scalar minimizer on the multinomial log-likelihood), not by the closed-form root the
    TypeScript uses: Z = (only_a - only_b - n delta) / sqrt(n (2 q + delta (1 - delta))).
    """
    rest = n - only_a - only_b
    lo, hi = max(0.0, -delta), (1 - delta) / 2  # q >= 0, q + delta >= 0, 1 - 2q - delta >= 0

    def nll(q):
        out = 0.0
        for count, prob in ((only_a, q + delta), (only_b, q), (rest, 1 - 2 * q - delta)):
            if count > 0:
                out -= count * math.log(max(prob, 1e-300))
        return out

    if hi - lo < 1e-15:
        q = lo
    else:
        q = optimize.minimize_scalar(nll, bounds=(lo, hi), method='bounded', options={'xatol': 1e-14}).x
        # The optimum may sit on a bound the bounded search only approaches.
        q = min((lo, q, hi), key=nll)
    var = n * (2 * q + delta * (1 - delta))
    num = only_a - only_b - n * delta
    if abs(num) < 1e-12:
        return 0.0
    return num / math.sqrt(var) if var > 0 else math.copysign(math.inf, num)


def tango(only_a, only_b, n):
    """Tango (1998): the delta with |Z(delta)| <= z, bounds by brentq on the numerical score."""
    z = float(stats.norm.ppf(0.975))
    d = (only_a - only_b) / n
    e = 1 - 1e-12
    lo = -1.0 if tango_score(only_a, only_b, n, -e) <= z else optimize.brentq(lambda x: tango_score(only_a, only_b, n, x) - z, -e, d, xtol=1e-14)
    hi = 1.0 if tango_score(only_a, only_b, n, e) >= -z else optimize.brentq(lambda x: tango_score(only_a, only_b, n, x) + z, d, e, xtol=1e-14)
    return [lo, hi]


def tangos():
    cases = [(12, 2, 50), (0, 0, 10), (5, 0, 10), (0, 12, 12), (4, 4, 14), (8, 3, 40), (1, 0, 24), (60, 45, 1000), (3, 9, 24)]
    return [{'only_a': b, 'only_b': c, 'n': n, 'ci95': tango(b, c, n)} for b, c, n in cases]


def paireds():
    a = rng.beta(5, 2, 120)
    out = [
        paired('n = 2', [0.9, 0.4], [0.3, 0.35]),
        paired('ties', [1, 1, 0.5, 0.5, 0, 1], [0.5, 0.5, 0.5, 0, 0, 0.5]),
        paired('all equal differences (zero)', [0.5] * 6, [0.5] * 6),
        paired('all equal differences (nonzero)', [0.8] * 5, [0.6] * 5),
        paired('correlated, n = 120', a, np.clip(a - 0.05 + rng.normal(0, 0.1, 120), 0, 1)),
        paired('pass/fail K = 3, n = 500', rng.binomial(3, 0.8, 500) / 3, rng.binomial(3, 0.6, 500) / 3),
    ]
    return out


def clustered_paired(name, a, b, groups):
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    c = clustered(name, d, groups)
    se, df, m = c['stderr'], c['df'], c['mean']
    out = {'name': name, 'a': floats(a), 'b': floats(b), 'clusters': [int(g) for g in groups], 'n': len(d), 'diff': m}
    if c['too_few_clusters']:
        return {**out, 'stderr': None, 'ci95': None, 'p_value': None, 'min_detectable_diff': None, 'too_few_clusters': True}
    return {
        **out, 'stderr': se, 'ci95': c['ci95'], 'p_value': float(2 * stats.t.cdf(-abs(m / se), df)),
        'min_detectable_diff': mde_lambda(df) * se, 'too_few_clusters': False,
    }


def clustered_paireds():
    groups = rng.integers(0, 8, 150)
    a = rng.beta(5, 2, 150)
    return [
        clustered_paired('three clusters, ties', [1, 1, 0, 1, 0, 0, 1, 1, 1], [0, 1, 0, 0, 0, 1, 0, 1, 0], [0, 0, 0, 1, 1, 1, 2, 2, 2]),
        clustered_paired('150 vignettes in 8 clusters', a, np.clip(a - 0.04 + rng.normal(0, 0.1, 150), 0, 1), groups),
    ]


def mcnemars():
    out = []
    for b, c in [(0, 0), (1, 0), (0, 1), (5, 1), (10, 10), (3, 17), (0, 25), (500, 560), (4000, 4100)]:
        # statsmodels' table: [[both pass, only a passes], [only b passes, both fail]]
        out.append({'b': b, 'c': c, 'p_value': float(mcnemar([[7, b], [c, 3]], exact=True).pvalue)})
    return out


def holms():
    cases = [
        [0.01],
        [0.01, 0.04, 0.03, 0.005],
        [0.02, 0.02, 0.02],
        [0.5, 0.9, 1.0, 0.001],
        [0.0, 0.0, 0.3],
        floats(rng.random(15) ** 3),
    ]
    return [{'p': p, 'p_holm': floats(multipletests(p, method='holm')[1])} for p in cases]


def pass_k():
    out = []
    for K in range(1, 13):
        for c in range(0, K + 1):
            for k in range(1, K + 1):
                at = 1 - Fraction(comb(K - c, k), comb(K, k))
                hat = Fraction(comb(c, k), comb(K, k))
                out.append({'K': K, 'c': c, 'k': k, 'pass_at_k': float(at), 'pass_hat_k': float(hat)})
    return out


def flips():
    return [
        {'K': K, 'c': c, 'flip_rate': float(Fraction(2 * c * (K - c), K * (K - 1)))}
        for K in range(2, 13) for c in range(0, K + 1)
    ]


def reducers():
    cases = [[1.0], [0.0, 1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [0.2, 0.9, 0.4, 0.4, 0.7], [0.3] * 4,
             floats(rng.random(10))]
    return [{'values': v, 'mean': float(np.mean(v)), 'majority': float(np.median(v)), 'max': float(np.max(v))} for v in cases]


def noise_share(name, rows):
    xs = np.array([np.mean(r) for r in rows])
    noise = [np.var(r, ddof=1) / len(r) for r in rows if len(r) >= 2]
    v = np.var(xs, ddof=1)
    share = None if not noise or v == 0 else float(min(1.0, np.mean(noise) / v))
    return {'name': name, 'rows': [floats(r) for r in rows], 'share': share}


def noise_shares():
    p = rng.beta(2, 2, 200)
    return [
        noise_share('pass/fail K = 5 over varied difficulty', [floats(rng.binomial(1, pi, 5)) for pi in p]),
        noise_share('graded with missing epochs', [floats(rng.random(int(k))) for k in rng.integers(1, 6, 80)]),
        noise_share('epochs identical (no noise)', [[v, v, v] for v in floats(rng.random(30))]),
        noise_share('pure noise (capped at 1)', [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
        noise_share('all equal (Var(x) = 0)', [[0.5, 0.5]] * 5),
    ]


def alpha(units, level):
    """Krippendorff's alpha by its definition: the coincidence matrix o_ck, n_c, and delta."""
    pairable = [[v for v in u if v is not None] for u in units]
    pairable = [u for u in pairable if len(u) >= 2]
    values = sorted({v for u in pairable for v in u})
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in pairable:
        m = len(u)
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[index[u[i]], index[u[j]]] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if n < 2:
        return None
    delta = np.array([[(c - k) ** 2 if level == 'interval' else float(c != k) for k in values] for c in values])
    d_o = (o * delta).sum() / n
    d_e = (np.outer(n_c, n_c) * delta).sum() / (n * (n - 1))
    return None if d_e == 0 else float(1 - d_o / d_e)


def alphas():
    N = None
    # Units are columns in the published example; here each unit lists its coders' values.
    published = [
        [1, 1, N, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
        [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [N, 5, 5, 5], [N, N, 1, 1], [N, 3, N, N],
    ]
    assert round(alpha(published, 'nominal'), 3) == 0.743
    assert round(alpha(published, 'interval'), 3) == 0.849
    graded = []
    for _ in range(60):
        truth = rng.random()
        u = [float(np.clip(truth + rng.normal(0, 0.15), 0, 1)) for _ in range(3)]
        u = [None if rng.random() < 0.2 else v for v in u]
        graded.append(u)
    binary = [[float(v) if rng.random() > 0.1 else None for v in ([t] * 2 + [t if rng.random() < 0.8 else 1 - t])]
              for t in rng.integers(0, 2, 100)]
    cases = [
        ('published example (Krippendorff 2011)', published),
        ('three judges, graded, 20 % missing', graded),
        ('pass/fail, one judge disagrees sometimes', binary),
        ('perfect agreement', [[0.0, 0.0], [1.0, 1.0], [0.5, 0.5, 0.5]]),
        ('all values equal', [[1.0, 1.0], [1.0, 1.0, N]]),
        ('too few values', [[1.0, N], [N, 0.0]]),
    ]
    return [
        {'name': name, 'units': units, 'interval': alpha(units, 'interval'), 'nominal': alpha(units, 'nominal')}
        for name, units in cases
    ]


def alpha_without_baseline():
    """
    A pairwise scorer's two judges over three models, the baseline among them: the baseline's own
    answers are 0.5 from every judge by definition, and agreement is measured on the others only.
    """
    cells = []
    for model in ['strong', 'weak', 'base']:
        for v in range(12):
            truth = float(rng.choice([0.0, 0.5, 1.0]))
            for judge in ['j1', 'j2']:
                value = 0.5 if model == 'base' else (truth if rng.random() < 0.75 else float(rng.choice([0.0, 0.5, 1.0])))
                cells.append({'model': model, 'vignette': f'v{v}', 'judge': judge, 'value': value})
    units = {}
    for c in cells:
        if c['model'] != 'base':
            units.setdefault((c['model'], c['vignette']), []).append(c['value'])
    every = {}
    for c in cells:
        every.setdefault((c['model'], c['vignette']), []).append(c['value'])
    return {'cells': cells, 'baseline': 'base', 'alpha': alpha(list(units.values()), 'interval'),
            'alpha_with_baseline': alpha(list(every.values()), 'interval')}


def main():
    quantiles, cdfs = t_ppf_cdf()
    fixture = {
        'made_by': 'scripts/stats-reference.py',
        'versions': {'scipy': __import__('scipy').__version__, 'statsmodels': sm.__version__, 'numpy': np.__version__},
        't_quantile': quantiles,
        't_cdf': cdfs,
        'mean_interval': mean_intervals(),
        'clustered': clustereds(),
        'paired': paireds(),
        'clustered_paired': clustered_paireds(),
        'mcnemar': mcnemars(),
        'holm': holms(),
        'pass_k': pass_k(),
        'flip_rate': flips(),
        'reducers': reducers(),
        'epoch_noise_share': noise_shares(),
        'krippendorff': alphas(),
        'mde_lambda': mde_lambdas(),
        'wilson': wilsons(),
        'tango': tangos(),
        'alpha_without_baseline': alpha_without_baseline(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, 'w') as f:
        json.dump(fixture, f, indent=1, allow_nan=False)
        f.write('\n')


if __name__ == '__main__':
    main()
