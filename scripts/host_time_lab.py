#!/usr/bin/env python3
"""Host-time laboratory: what Inductor's Python wrapper costs per call,
against what the graph's generated code does (Triton launches, extern calls,
allocations, views, inputs), over tests/data/measured. For trying the host
law of the wall-time model (core/measure/fit, core/predict) before porting it.

    python3 scripts/host_time_lab.py [h100|h200]
"""
import sys
import time_law_lab as L


def features(g):
    layouts = {}
    for n in g['nodes']:
        for o in n.get('outputs', []):
            layouts[o['name']] = o.get('layout', 'fixed')
    f = dict(triton=0, extern=0, coll=0, coll_copies=0, items=0, waits=0, allocs=0, inputs=len(g.get('inputs', [])))
    for n in g['nodes']:
        c = L.classify(g, n, layouts)
        if c in ('triton_pointwise', 'triton_reduction'):
            f['triton'] += 1
        elif c == 'collective':
            f['coll'] += 1
            if 'all_gather' in n.get('kernel', ''):  # the fake process group copies once per rank
                f['coll_copies'] += n['collective']['group_size']
        elif c == 'none':
            f['items' if n['kind'] == 'extern' else 'waits'] += 1
        else:
            f['extern'] += 1
        f['allocs'] += sum(1 for o in n.get('outputs', []) if o.get('layout', 'fixed') == 'fixed' and not o.get('mutation_of'))
    return f


def main():
    gpu = sys.argv[1] if len(sys.argv) > 1 else 'h100'
    for case, held, g, m in L.load(gpu):
        f = features(g)
        print(f"{case:28s} {'H' if held else 'F'} host {m.get('host_time_us') or 0:8.1f} wall {m['wall_time_us']:8.1f} "
              f"kern {m['kernel_time_us']:8.1f} " + ' '.join(f'{k} {v}' for k, v in f.items()))


if __name__ == '__main__':
    main()
