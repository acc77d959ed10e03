#!/usr/bin/env python3
"""Time-law laboratory: the base terms of the calibrated kernel laws (fixed,
compute, memory) fitted in Python over tests/data/measured, for a first look
at a class before trying a new term in the C++ law (core/cost/law_features,
core/measure/fit; `schedlab accuracy --nodes OUT.tsv` lists the full law's
estimate of every measured node). Prints, per class, the fit on the fitting
models and the held-out per-graph and per-class ratios. Its classify() and
load() also serve scripts/host_time_lab.py.

    python3 scripts/time_law_lab.py [h100|h200] [--class convolution] [--nodes]
"""
import argparse, glob, json, math, os, sys

HELD = ['llama_block', 'vit', 'unet_gn', 'moe_dropless', 'kv_decode', 'bert_dynamic', 'tp2d']
PEAK = {'bf16': 989.4e12, 'f16': 989.4e12, 'f32': 67e12, 'tf32': 494.7e12, 'f8': 1978.9e12}
DRAM = {'h100': 3.35e12, 'h200': 4.8e12}
GEMM_OPS = {'mm', 'addmm', 'bmm', 'baddbmm', 'matmul', '_scaled_mm', '_int_mm', 'addbmm', 'linear'}


def op_name(kernel):
    """As core/cost/kernel_class.cpp: torch.ops.aten.mm.default -> mm, aten.randint.low_out -> randint."""
    s = kernel.removeprefix('torch.ops.')
    parts = s.split('.')
    if len(parts) == 1:
        return s
    return parts[-1] if parts[0] == 'extern_kernels' else parts[1]


ELEMENTWISE_OPS = {'copy_', 'clone', '_to_copy', 'copy', 'rand', 'randn', 'randint', 'rand_like', 'randn_like', 'randint_like',
                   'bernoulli', 'bernoulli_', 'uniform_', 'normal_'}


def classify(g, n, layouts):
    k = n['kind']
    if k in ('wait', 'nop'):
        return 'none'
    if k == 'collective':
        return 'collective'
    if k == 'pointwise':
        return 'triton_pointwise'
    if k == 'reduction':
        return 'triton_reduction'
    kern = n.get('kernel', '')
    if k == 'template':
        return 'convolution' if 'conv' in kern else 'gemm'
    if not kern and all(layouts.get(o['name']) in ('multi_output_item', 'none') for o in n.get('outputs', [])):
        return 'none'
    bw = 'backward' in kern
    if 'attention' in kern:
        return 'attention_backward' if bw else 'attention'
    if 'convolution' in kern:
        return 'convolution_backward' if bw else 'convolution'
    op = op_name(kern)
    if op in GEMM_OPS:
        return 'gemm'
    if op in ELEMENTWISE_OPS:
        return 'copy'
    return 'extern'


def load(gpu):
    out = []
    for f in sorted(glob.glob(f'tests/data/measured/{gpu}/*.measured.json')):
        case = os.path.basename(f)[:-len('.measured.json')]
        gp = f[:-len('.measured.json')] + '.post.json'
        if not os.path.exists(gp):
            gp = f'tests/data/exported/{case}.post.json'
        g, m = json.load(open(gp)), json.load(open(f))
        held = any(case.startswith(h + '_') and case[len(h) + 1].isdigit() for h in HELD)
        out.append((case, held, g, m))
    return out


def node_rows(gpu, g, m):
    """One row per node: class, measured us, kernels, roofline terms, shapes."""
    layouts, shapes = {}, {}
    for i in g.get('inputs', []):
        shapes[i['name']] = i
    for n in g['nodes']:
        for o in n.get('outputs', []):
            layouts[o['name']] = o.get('layout', 'fixed')
            shapes[o['name']] = o
    meas, nk = {}, {}
    for k in m['kernels']:
        if k['node']:
            meas[k['node']] = meas.get(k['node'], 0) + k['duration_us']
            nk[k['node']] = nk.get(k['node'], 0) + 1
    rows = []
    for n in g['nodes']:
        c = classify(g, n, layouts)
        if c in ('none', 'collective'):
            continue
        dt = next((o['dtype'] for o in n.get('outputs', []) if o.get('dtype')), 'f32')
        if dt == 'f32' and c.startswith('convolution'):
            dt = 'tf32'
        flops = n.get('flops') or 0
        by = sum(d['bytes'] for d in n.get('reads', []) + n.get('writes', []) if d.get('dep', 'memory') in ('memory', 'star'))
        rows.append(dict(node=n, name=n['name'], cls=c, meas=meas.get(n['name'], 0.0), kernels=nk.get(n['name'], 0),
                         compute=flops / PEAK.get(dt, PEAK['f32']) * 1e6, memory=by / DRAM[gpu] * 1e6, dtype=dt, shapes=shapes))
    return rows


def nnls(rows, feats, power=1.5):
    """Best non-negative weighted least squares over column subsets."""
    import itertools
    best, best_sse = None, float('inf')
    k = len(feats)
    for r in range(1, k + 1):
        for cols in itertools.combinations(range(k), r):
            A = [[0.0] * (r + 1) for _ in range(r)]
            for x in rows:
                w = max(x['meas'], 1e-3) ** -power
                f = [feats[c](x) for c in cols]
                for i in range(r):
                    for j in range(r):
                        A[i][j] += w * f[i] * f[j]
                    A[i][r] += w * f[i] * x['meas']
            try:
                sol = solve(A)
            except ZeroDivisionError:
                continue
            if any(s < 0 or not math.isfinite(s) for s in sol):
                continue
            coef = [0.0] * k
            for c, s in zip(cols, sol):
                coef[c] = s
            sse = sum(max(x['meas'], 1e-3) ** -power * (sum(coef[c] * feats[c](x) for c in range(k)) - x['meas']) ** 2 for x in rows)
            if sse < best_sse:
                best, best_sse = coef, sse
    return best


def solve(A):
    n = len(A)
    for i in range(n):
        p = max(range(i, n), key=lambda r: abs(A[r][i]))
        if abs(A[p][i]) < 1e-12:
            raise ZeroDivisionError
        A[i], A[p] = A[p], A[i]
        for r in range(n):
            if r != i:
                f = A[r][i] / A[i][i]
                A[r] = [a - f * b for a, b in zip(A[r], A[i])]
    return [A[i][n] / A[i][i] for i in range(n)]


BASE_FEATS = [lambda x: 1.0, lambda x: x['compute'], lambda x: x['memory']]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('gpu', nargs='?', default='h100')
    ap.add_argument('--cls')
    ap.add_argument('--nodes', action='store_true')
    a = ap.parse_args()
    data = load(a.gpu)
    fit_rows, held = [], []
    for case, is_held, g, m in data:
        rows = node_rows(a.gpu, g, m)
        if is_held:
            held.append((case, rows))
        else:
            fit_rows.extend(rows)
    classes = sorted({r['cls'] for r in fit_rows})
    laws = {c: nnls([r for r in fit_rows if r['cls'] == c and r['kernels']], BASE_FEATS) for c in classes}
    for c, coef in laws.items():
        print(f'{c:22s} fixed {coef[0]:8.3f} compute {coef[1]:8.3f} memory {coef[2]:8.3f}')
    pred = lambda r: sum(k * f(r) for k, f in zip(laws.get(r['cls'], [0, 0, 0]), BASE_FEATS))
    cls_sum = {}
    errs = []
    for case, rows in held:
        e = sum(pred(r) for r in rows)
        mm = sum(r['meas'] for r in rows)
        errs.append(abs(e / mm - 1))
        print(f'{case:28s} {mm:9.1f} {e / mm:6.3f}')
        for r in rows:
            s = cls_sum.setdefault(r['cls'], [0, 0])
            s[0] += pred(r)
            s[1] += r['meas']
            if a.nodes and (not a.cls or r['cls'] == a.cls):
                print(f'   {r["name"]:24s} {r["cls"]:20s} meas {r["meas"]:8.1f} est {pred(r):8.1f} c {r["compute"]:7.2f} m {r["memory"]:7.2f}')
    for c, (e, mm) in sorted(cls_sum.items()):
        print(f'{c:22s} {mm:9.1f} {e / mm if mm else 0:6.3f}')
    errs.sort()
    print('median %.3f worst %.3f' % (errs[len(errs) // 2] if len(errs) % 2 else (errs[len(errs) // 2 - 1] + errs[len(errs) // 2]) / 2, errs[-1]))


if __name__ == '__main__':
    main()
