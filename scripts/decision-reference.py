#!/usr/bin/python3
"""
Reference values for deciding with Panoptes, by an independent implementation:

1. Planning (core/scoring/power.ts, core/scoring/plan.ts): Miller's (2024) sample size for a paired
   comparison over K epochs and McNemar's (Connor 1987) for one pass/fail epoch, with scipy's normal
   quantiles; the variance components of a guess and of a pilot; and a SIMULATION that draws a
   population of vignettes (per-vignette pass chances of two correlated models), plans n from the
   population's own components, runs 2,000 simulated sweeps at that n for K = 1, 2, 3, 5 and
   reports the share that detect the difference (paired t test, or exact McNemar for K = 1, at
   alpha / m): the achieved power, to be within a few points of the target.
2. Adaptive stopping (core/scoring/confidence-sequence.ts): the hedged betting confidence sequence
   (Waudby-Smith & Ramdas 2024), written again here over a numpy grid, its intervals on a fixed
   sequence; and SIMULATIONS: 1,000 runs of two equal models to the
   end of a 300-vignette manifest (how often the sequence ever excludes 0: a false decision, to be
   at most alpha), 1,000 runs of 0.9 against 0.5 stopped at the first batch of 10 whose interval
   excludes 0 (the share of the calls spent, to be at most 40 %), and 0.62 against 0.60.

Writes test/scoring/fixtures/decision.json; test/decide/plan.test.ts compares the TypeScript with it.
Run with Debian's python3 (apt-get install -y python3-scipy python3-statsmodels):
    /usr/bin/python3 scripts/decision-reference.py
Everything is drawn from fixed seeds, so re-running gives the same file.
Runs on: Python 3 with scipy and statsmodels (a developer's tool; CI reads only its output).
"""
import json
import math
import os

import numpy as np
from scipy import stats

OUT = os.path.join(os.path.dirname(__file__), '..', 'test', 'scoring', 'fixtures', 'decision.json')
out = {}


# ---- 1. Planning -------------------------------------------------------------------------------

def z(p):
    return float(stats.norm.ppf(p))


def miller_n(between, within, k, delta, alpha, power, pairs):
    return (z(1 - alpha / (2 * pairs)) + z(power)) ** 2 * (between + within / k) / delta ** 2


def mcnemar_n(psi, delta, alpha, power, pairs):
    return (z(1 - alpha / (2 * pairs)) * math.sqrt(psi) + z(power) * math.sqrt(psi - delta ** 2)) ** 2 / delta ** 2


formula_cases = []
for between, within, delta, pairs, power in [(0.05, 0.2, 0.1, 1, 0.8), (0.3, 0.1, 0.05, 3, 0.8), (0.01, 0.4, 0.2, 6, 0.9), (0.0, 0.3, 0.1, 1, 0.8)]:
    formula_cases.append({
        'between': between, 'within': within, 'delta': delta, 'alpha': 0.05, 'power': power, 'pairs': pairs,
        'miller': {str(k): miller_n(between, within, k, delta, 0.05, power, pairs) for k in (1, 2, 3, 5)},
    })
mcnemar_cases = [
    {'psi': psi, 'delta': delta, 'alpha': 0.05, 'power': power, 'pairs': pairs, 'n': mcnemar_n(psi, delta, 0.05, power, pairs)}
    for psi, delta, pairs, power in [(0.3, 0.1, 1, 0.8), (0.2, 0.05, 3, 0.8), (0.5, 0.2, 1, 0.9)]
]


def guess_components(pa, pb, fa, fb, rho):
    va = pa * (1 - pa) - fa / 2
    vb = pb * (1 - pb) - fb / 2
    cov = rho * math.sqrt(va * vb)
    return {'between': va + vb - 2 * cov, 'within': fa / 2 + fb / 2, 'discordance': pa + pb - 2 * (pa * pb + cov)}


guess_cases = [
    {'accuracyA': pa, 'accuracyB': pb, 'flipRateA': fa, 'flipRateB': fb, 'correlation': rho, 'components': guess_components(pa, pb, fa, fb, rho)}
    for pa, pb, fa, fb, rho in [(0.8, 0.7, 0.1, 0.1, 0.3), (0.9, 0.5, 0.0, 0.2, 0.0), (0.6, 0.6, 0.3, 0.3, 0.8)]
]

# A pilot: 40 vignettes x 3 epochs x 2 models of pass/fail, and its components by their definitions.
rng = np.random.default_rng(20261201)
pa_i = rng.beta(4, 1.5, size=40)
pb_i = np.clip(pa_i - rng.uniform(0, 0.3, size=40), 0, 1)
pilot_a = (rng.uniform(size=(40, 3)) < pa_i[:, None]).astype(float)
pilot_b = (rng.uniform(size=(40, 3)) < pb_i[:, None]).astype(float)
d_bar = pilot_a.mean(axis=1) - pilot_b.mean(axis=1)
s_a = pilot_a.var(axis=1, ddof=1)
s_b = pilot_b.var(axis=1, ddof=1)
ma, mb = pilot_a.mean(axis=1), pilot_b.mean(axis=1)
pilot = {
    'a': pilot_a.tolist(), 'b': pilot_b.tolist(),
    'components': {
        'between': max(0.0, float(np.var(d_bar, ddof=1) - np.mean(s_a / 3 + s_b / 3))),
        'within': float(np.mean(s_a) + np.mean(s_b)),
        'discordance': float(np.mean(ma + mb - 2 * ma * mb)),
    },
}

# The simulation: a population of 200,000 vignettes whose two models' pass chances are correlated
# probits; its true components; n planned from them; 2,000 sweeps at n; the achieved power.
pop_rng = np.random.default_rng(7)
zs = pop_rng.multivariate_normal([0, 0], [[1, 0.5], [0.5, 1]], size=200_000)
pop_a = stats.norm.cdf(1.0 + 0.8 * zs[:, 0])
pop_b = stats.norm.cdf(0.55 + 0.8 * zs[:, 1])
acc_a, acc_b = float(pop_a.mean()), float(pop_b.mean())
pop = {
    'between': float(np.var(pop_a - pop_b)),
    'within': float(np.mean(pop_a * (1 - pop_a)) + np.mean(pop_b * (1 - pop_b))),
    'discordance': float(np.mean(pop_a + pop_b - 2 * pop_a * pop_b)),
}
SIM_DELTA = acc_a - acc_b
SIMS = 2000


def simulate_power(n, k, alpha, pairs, seed):
    r = np.random.default_rng(seed)
    hits = 0
    for _ in range(SIMS):
        idx = r.integers(0, pop_a.size, size=n)
        a = (r.uniform(size=(n, k)) < pop_a[idx, None]).astype(float)
        b = (r.uniform(size=(n, k)) < pop_b[idx, None]).astype(float)
        if k == 1:
            only_a = int(np.sum((a[:, 0] == 1) & (b[:, 0] == 0)))
            only_b = int(np.sum((a[:, 0] == 0) & (b[:, 0] == 1)))
            p = stats.binomtest(min(only_a, only_b), only_a + only_b, 0.5).pvalue if only_a + only_b > 0 else 1.0
            right = only_a > only_b
        else:
            d = a.mean(axis=1) - b.mean(axis=1)
            p = stats.ttest_1samp(d, 0).pvalue
            right = d.mean() > 0
        if p < alpha / pairs and right:
            hits += 1
    return hits / SIMS


simulation = {'population': {'accuracyA': acc_a, 'accuracyB': acc_b, **pop}, 'delta': SIM_DELTA, 'alpha': 0.05, 'power': 0.8, 'sims': SIMS, 'designs': []}
for pairs in (1, 3):
    for k in (1, 2, 3, 5):
        if k == 1:
            n = math.ceil(mcnemar_n(pop['discordance'], SIM_DELTA, 0.05, 0.8, pairs))
        else:
            n = math.ceil(miller_n(pop['between'], pop['within'], k, SIM_DELTA, 0.05, 0.8, pairs))
        achieved = simulate_power(n, k, 0.05, pairs, seed=1000 * pairs + k)
        simulation['designs'].append({'pairs': pairs, 'epochs': k, 'vignettes': n, 'achieved_power': achieved})
        print(f'pairs {pairs} K={k}: n={n} achieved power {achieved:.3f} (target 0.8)')

out['planning'] = {'formula': formula_cases, 'mcnemar': mcnemar_cases, 'guess': guess_cases, 'pilot': pilot, 'simulation': simulation}


# ---- 2. Adaptive stopping ----------------------------------------------------------------------

GRID = 2001
CAP = 0.5


def cs_run(d_rows, population, alpha, batch=None):
    """The sequence over rows of differences, vectorised over runs: d_rows has shape (runs, T).
    Returns the intervals (lo, hi) after every draw (or every batch), shape (runs, checks, 2)."""
    runs, T = d_rows.shape
    m = np.arange(GRID) / (GRID - 1)
    log_kp = np.zeros((runs, GRID))
    log_km = np.zeros((runs, GRID))
    rejected = np.zeros((runs, GRID), dtype=bool)
    total = np.zeros(runs)
    squares = np.full(runs, 0.25)
    thr = math.log(1 / alpha)
    last_lo = np.zeros(runs, dtype=int)
    last_hi = np.full(runs, GRID - 1)
    out = []
    for t in range(1, T + 1):
        x = (d_rows[:, t - 1] + 1) / 2
        var = squares / t
        bet = np.minimum(np.sqrt(2 * math.log(2 / alpha) / (var * t * math.log(1 + t))), CAP)
        mu = np.broadcast_to(m[None, :], (runs, GRID))
        impossible = np.zeros((runs, GRID), dtype=bool)
        with np.errstate(divide='ignore', invalid='ignore'):
            lp = np.where(mu > 0, np.minimum(bet[:, None], CAP / mu), bet[:, None])
            lm = np.where(mu < 1, np.minimum(bet[:, None], CAP / (1 - mu)), bet[:, None])
            step_p = np.log1p(lp * (x[:, None] - mu))
            step_m = np.log1p(-lm * (x[:, None] - mu))
        live = ~rejected & ~impossible
        log_kp = np.where(live, log_kp + step_p, log_kp)
        log_km = np.where(live, log_km + step_m, log_km)
        rejected |= impossible | (live & (np.maximum(math.log(0.5) + log_kp, math.log(0.5) + log_km) >= thr))
        total += x
        mu_hat = (0.5 + total) / (t + 1)
        squares += (x - mu_hat) ** 2
        any_left = (~rejected).any(axis=1)
        lo_idx = np.where(any_left, np.argmax(~rejected, axis=1), last_lo)
        hi_idx = np.where(any_left, GRID - 1 - np.argmax(~rejected[:, ::-1], axis=1), last_hi)
        last_lo, last_hi = lo_idx, hi_idx
        if batch is None or t % batch == 0 or t == T:
            lo = np.where(lo_idx > 0, (lo_idx - 1) / (GRID - 1), 0.0) * 2 - 1
            hi = np.where(hi_idx < GRID - 1, (hi_idx + 1) / (GRID - 1), 1.0) * 2 - 1
            out.append(np.stack([lo, hi], axis=1))
    return np.stack(out, axis=1)


cs_rng = np.random.default_rng(99)
fixed_d = (cs_rng.uniform(size=120) < 0.7).astype(float) - (cs_rng.uniform(size=120) < 0.5).astype(float)
fixed_d[::7] = cs_rng.uniform(-1, 1, size=fixed_d[::7].size)  # a few graded differences too
fixed = cs_run(fixed_d[None, :], population=200, alpha=0.05)[0]
sequence = {'population': 200, 'alpha': 0.05, 'd': fixed_d.tolist(), 'intervals': fixed.tolist()}

SIM_N = 300
RUNS = 1000
sim_rng = np.random.default_rng(2026)
p_i = sim_rng.beta(2, 2, size=(RUNS, SIM_N))
null_d = (sim_rng.uniform(size=(RUNS, SIM_N)) < p_i).astype(float) - (sim_rng.uniform(size=(RUNS, SIM_N)) < p_i).astype(float)
null_iv = cs_run(null_d, SIM_N, 0.05, batch=10)
false_rate = float(np.mean(((null_iv[:, :, 0] > 0) | (null_iv[:, :, 1] < 0)).any(axis=1)))
print(f'equal models: a false decision in {false_rate:.3f} of {RUNS} runs to the end (alpha 0.05)')


def stop_share(pa, pb, seed):
    r = np.random.default_rng(seed)
    d = (r.uniform(size=(RUNS, SIM_N)) < pa).astype(float) - (r.uniform(size=(RUNS, SIM_N)) < pb).astype(float)
    iv = cs_run(d, SIM_N, 0.05, batch=10)
    excl = (iv[:, :, 0] > 0) | (iv[:, :, 1] < 0)
    stopped = excl.any(axis=1)
    first = np.where(stopped, np.argmax(excl, axis=1), iv.shape[1] - 1)
    n_stop = np.minimum((first + 1) * 10, SIM_N)
    wrong = float(np.mean(stopped & (iv[np.arange(RUNS), first, 1] < 0))) if pa > pb else 0.0
    return {'accuracyA': pa, 'accuracyB': pb, 'decided': float(stopped.mean()), 'wrong_winner': wrong,
            'mean_share_of_calls': float(np.mean(n_stop / SIM_N)), 'max_share_of_calls': float(np.max(n_stop / SIM_N)),
            'median_n': float(np.median(n_stop))}


clear = stop_share(0.9, 0.5, 5)
close = stop_share(0.62, 0.60, 6)
print(f"0.9 vs 0.5: decided in {clear['decided']:.3f}, calls spent mean {clear['mean_share_of_calls']:.3f} max {clear['max_share_of_calls']:.3f}")
print(f"0.62 vs 0.60: decided in {close['decided']:.3f}, calls spent mean {close['mean_share_of_calls']:.3f}")
out['adaptive'] = {'grid': GRID, 'sequence': sequence, 'simulation': {'population': SIM_N, 'runs': RUNS, 'batch': 10, 'alpha': 0.05,
                   'null_false_decision_rate': false_rate, 'clear': clear, 'close': close}}

with open(OUT, 'w') as f:
    json.dump(out, f, indent=1)
    f.write('\n')
print('wrote', os.path.relpath(OUT))
