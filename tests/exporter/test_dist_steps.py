"""Checks of the real steps' torch-free parts (python/dist): the hand-written
bucket plans (bucketing.py), the schedule table and its config changes
(schedules.py), and compare.py's choice of measured schedules."""

from __future__ import annotations

import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "dist"))
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import archives  # noqa: E402
import bucketing  # noqa: E402
import pass_timing  # noqa: E402
import schedules  # noqa: E402
from compare import measured_schedules  # noqa: E402
from reps import collect, compile_seconds, markdown, peer_wait_table, summarize, versus, versus_best  # noqa: E402

MIB = 1024 * 1024


class DdpBuckets(unittest.TestCase):
    def test_ddp_rule_first_bucket_one_mib_then_25(self):
        # ready order of the ddp_buckets step: per layer (bias 4 KiB, weight 8 MiB), last layer first
        sizes = [4096, 8 * MIB] * 24
        buckets = bucketing.ddp_bucket_assignment(sizes)
        self.assertEqual(buckets[0], [0, 1])  # bias + weight pass 1 MiB: the first bucket closes
        self.assertEqual(buckets[1], list(range(2, 10)))  # 4 weights: 32 MiB >= 25; 3 (24 MiB) do not
        self.assertEqual([i for b in buckets for i in b], list(range(48)))  # every gradient once, in order
        self.assertEqual(len(buckets), 7)
        self.assertEqual(buckets[-1], list(range(42, 48)))  # the rest, under the cap

    def test_a_bucket_closes_on_reaching_its_cap(self):
        self.assertEqual(bucketing.ddp_bucket_assignment([5, 5, 5, 5], cap_bytes=10, first_cap_bytes=5),
                         [[0], [1, 2], [3]])
        self.assertEqual(bucketing.ddp_bucket_assignment([1, 1, 1], cap_bytes=0, first_cap_bytes=0),
                         [[0], [1], [2]])
        self.assertEqual(bucketing.ddp_bucket_assignment([]), [])
        with self.assertRaises(ValueError):
            bucketing.ddp_bucket_assignment([3, -1])


class FlatLayouts(unittest.TestCase):
    def test_offsets_and_padding_to_the_world(self):
        layout = bucketing.flat_layout([("norm", (3,)), ("w", (2, 5))], world=4)
        self.assertEqual([(s.name, s.offset, s.numel) for s in layout.slots], [("norm", 0, 3), ("w", 3, 10)])
        self.assertEqual(layout.numel, 16)  # 13 padded up to a multiple of 4
        self.assertEqual(layout.shard_numel, 4)
        self.assertEqual(bucketing.flat_layout([("w", (4, 4))], world=1).numel, 16)
        with self.assertRaises(ValueError):
            bucketing.flat_layout([("w", (0, 4))], world=2)
        with self.assertRaises(ValueError):
            bucketing.flat_layout([], world=2)
        with self.assertRaises(ValueError):
            bucketing.flat_layout([("w", (4,))], world=0)

    def test_fsdp_groups_per_block_or_per_parameter(self):
        block = [("attn_norm", (8,)), ("wq", (8, 8)), ("w2", (8, 16))]
        per_block = bucketing.fsdp_groups([block, block], world=4, per_block=True)
        per_param = bucketing.fsdp_groups([block, block], world=4, per_block=False)
        self.assertEqual([len(b) for b in per_block], [1, 1])  # one all-gather / reduce-scatter per block
        self.assertEqual([len(b) for b in per_param], [3, 3])
        self.assertEqual(per_block[0][0].numel, 8 + 64 + 128)
        self.assertEqual([l.slots[0].name for l in per_param[1]], ["attn_norm", "wq", "w2"])
        self.assertEqual(sum(l.numel for l in per_param[0]), per_block[0][0].numel)


class ExpertCapacity(unittest.TestCase):
    def test_capacity_factor_rounds_up(self):
        self.assertEqual(bucketing.expert_capacity(4096, 8, 2, 1.25), 1280)  # moe_a2a at world 4
        self.assertEqual(bucketing.expert_capacity(4096, 2, 2, 1.25), 5120)  # at world 1: nothing dropped
        self.assertEqual(bucketing.expert_capacity(10, 3, 1, 1.0), 4)
        for bad in ((0, 8, 2, 1.0), (16, 2, 3, 1.0), (16, 2, 1, 0.0)):
            with self.assertRaises(ValueError):
                bucketing.expert_capacity(*bad)


class ScheduleTable(unittest.TestCase):
    def test_names(self):
        self.assertEqual(schedules.SCHEDULES[:5],
                         ("default", "recommended", "schedlab", "schedlab_bucket", "schedlab_bucket_defer"))
        self.assertEqual(set(schedules.SCHEDULES[5:]),
                         {"fx_overlap", "fx_overlap_bucket", "fx_bucket", "fx_overlap_schedlab"})
        self.assertEqual(schedules.APPLY_SCHEDULES, {"schedlab": False, "schedlab_bucket": True, "schedlab_bucket_defer": True})
        self.assertEqual(set(schedules.SCHEDLAB_DRIVEN),
                         {"schedlab", "schedlab_bucket", "schedlab_bucket_defer", "fx_overlap_schedlab"})

    def test_apply_comm_passes(self):
        # An apply schedule's own passes follow --comm-passes, once.
        self.assertEqual(schedules.apply_comm_passes("schedlab_bucket", ["overlap_schedule_step"]), ["overlap_schedule_step"])
        self.assertEqual(schedules.apply_comm_passes("schedlab_bucket_defer", ["overlap_schedule_step"]),
                         ["overlap_schedule_step", "defer_stalled_compute"])
        self.assertEqual(schedules.apply_comm_passes("schedlab_bucket_defer", ["defer_stalled_compute"]), ["defer_stalled_compute"])
        self.assertEqual(schedules.DEFAULT_SCHEDULES, ("default", "recommended", "schedlab"))
        self.assertEqual(schedules.unknown(["fx_overlap", "fx_overlapp"], schedules.SCHEDULES), ["fx_overlapp"])

    def test_fx_config_with_every_field(self):
        has = lambda field: True  # noqa: E731
        self.assertEqual(schedules.fx_config("fx_overlap", has),
                         {"aten_distributed_optimizations.enable_overlap_scheduling": True})
        self.assertEqual(schedules.fx_config("fx_overlap_bucket", has),
                         {"aten_distributed_optimizations.enable_overlap_scheduling": True,
                          "aten_distributed_optimizations.collective_bucketing": True})
        self.assertEqual(schedules.fx_config("fx_bucket", has),
                         {"bucket_all_gathers_fx": "all", "bucket_reduce_scatters_fx": "all",
                          "bucket_all_reduces_fx": "all"})
        self.assertEqual(schedules.fx_config("fx_overlap_schedlab", has),
                         {"aten_distributed_optimizations.enable_overlap_scheduling": True,
                          "aten_distributed_optimizations.custom_runtime_estimation": schedules.SCHEDLAB_ESTIMATOR})
        with self.assertRaises(KeyError):
            schedules.fx_config("default", has)

    def test_the_estimator_stands_in_only_where_a_field_names_it(self):
        made = []
        make = lambda: made.append(1) or "the estimator"  # noqa: E731
        changes, estimator = schedules.with_estimator(schedules.fx_config("fx_overlap_schedlab", lambda f: True), make)
        self.assertEqual(estimator, "the estimator")
        self.assertEqual(changes["aten_distributed_optimizations.custom_runtime_estimation"], "the estimator")
        self.assertTrue(changes["aten_distributed_optimizations.enable_overlap_scheduling"])
        plain = schedules.fx_config("fx_overlap", lambda f: True)
        self.assertEqual(schedules.with_estimator(plain, make), (plain, None))
        self.assertEqual(made, [1])  # not built for fx_overlap

    def test_a_torch_without_the_estimator_field_refuses_only_that_schedule(self):
        config = SimpleNamespace(aten_distributed_optimizations=SimpleNamespace(enable_overlap_scheduling=False))
        has = lambda field: schedules.config_has(config, field)  # noqa: E731
        self.assertEqual(schedules.fx_config("fx_overlap", has),
                         {"aten_distributed_optimizations.enable_overlap_scheduling": True})
        with self.assertRaises(schedules.ScheduleUnavailable) as caught:
            schedules.fx_config("fx_overlap_schedlab", has, "2.9.0")
        self.assertEqual(str(caught.exception), "schedule fx_overlap_schedlab: torch._inductor.config has no field "
                         "aten_distributed_optimizations.custom_runtime_estimation (torch 2.9.0)")

    def test_a_missing_field_names_itself_and_optional_fields_drop(self):
        config = SimpleNamespace(bucket_all_gathers_fx="none", bucket_reduce_scatters_fx="none",
                                 aten_distributed_optimizations=SimpleNamespace(enable_overlap_scheduling=False))
        has = lambda field: schedules.config_has(config, field)  # noqa: E731
        self.assertTrue(has("aten_distributed_optimizations.enable_overlap_scheduling"))
        self.assertFalse(has("aten_distributed_optimizations.collective_bucketing"))
        self.assertFalse(has("no_such_group.enable_overlap_scheduling"))
        self.assertEqual(schedules.fx_config("fx_bucket", has),
                         {"bucket_all_gathers_fx": "all", "bucket_reduce_scatters_fx": "all"})
        with self.assertRaises(schedules.ScheduleUnavailable) as caught:
            schedules.fx_config("fx_overlap_bucket", has, "2.9.0")
        self.assertIn("aten_distributed_optimizations.collective_bucketing", str(caught.exception))
        self.assertIn("2.9.0", str(caught.exception))
        self.assertEqual(len(str(caught.exception).splitlines()), 1)


class StepTable(unittest.TestCase):
    """steps.py needs torch; its table is read from the source."""

    def test_every_step_is_registered_documented_and_the_default_five_stay(self):
        tree = ast.parse((ROOT / "python" / "dist" / "steps.py").read_text())
        values = {t.id: node.value for node in tree.body if isinstance(node, ast.Assign)
                  for t in node.targets if isinstance(t, ast.Name)}
        steps = {k.value: v.id for k, v in zip(values["STEPS"].keys, values["STEPS"].values)}
        defaults = [e.value for e in values["DEFAULT_STEPS"].elts]
        self.assertEqual(defaults, ["tp_block", "fsdp", "ddp", "fsdp_fwd_bwd", "tp_microbatch"])
        self.assertEqual(set(steps) - set(defaults), {
            "fsdp_fwd_bwd_bucketed", "llama_fsdp", "llama_fsdp_per_param", "tp_sp_block", "moe_a2a",
            "ddp_buckets", "ddp_per_grad"})
        builders = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        doc = ast.get_docstring(tree)
        for name, builder in steps.items():
            self.assertEqual(name, builder)  # a step's name is its builder's
            self.assertIn(builder, builders)
            self.assertIn(f"  {name} ", doc)


class Repetitions(unittest.TestCase):
    def test_one_run_into_out_else_numbered(self):
        out = Path("OUT")
        self.assertEqual(schedules.repetition_dirs(out, 1, None), [out])
        self.assertEqual(schedules.repetition_dirs(out, 3, None), [out / "r1", out / "r2", out / "r3"])
        self.assertEqual(schedules.repetition_dirs(out, 1, 3), [out / "r3"])  # rep 3 in a launch of its own
        self.assertEqual(schedules.repetition_dirs(out, 2, 2), [out / "r2", out / "r3"])


class CompareSchedules(unittest.TestCase):
    def test_measured_schedules_in_table_order_then_others(self):
        with tempfile.TemporaryDirectory() as tmp:
            step = Path(tmp) / "llama_fsdp"
            for schedule in ("fx_bucket", "schedlab", "default", "zz_new", "fx_overlap"):
                (step / schedule).mkdir(parents=True)
                (step / schedule / "rank0.json").write_text(json.dumps({}))
            (step / "recommended").mkdir()  # failed: no rank file
            (step / "recommended" / "failed.rank0.txt").write_text("x")
            self.assertEqual(measured_schedules(step), ["default", "schedlab", "fx_overlap", "fx_bucket", "zz_new"])


def extracted(archive: str):
    """A checked-in lease (tests/data/dist4/steps/ARCHIVE) unpacked into a
    temporary folder, removed after."""
    return archives.extracted(ROOT / "tests" / "data" / "dist4" / "steps" / archive)


def verdicts_of(table: list[str]) -> dict[str, str]:
    """Per step, the "beyond the spread?" column of a reps.py --versus-best
    or --versus table (its lines, header included)."""
    return {line.split(" | ")[0].lstrip("| "): line.split(" | ")[4].rstrip(" |") for line in table[2:]}


def assert_documented(test: unittest.TestCase, lines) -> None:
    """Every line (of tables reps.py writes) is in docs/gpu-validation.md."""
    doc = (ROOT / "docs" / "gpu-validation.md").read_text()
    for line in lines:
        test.assertIn(line, doc)


def lease_rows(archive: str, root: str = "steps") -> list[dict]:
    """reps.py's rows of a checked-in lease, its repetitions under `root` in the archive."""
    with extracted(archive) as tmp:
        return summarize(collect(tmp / root))


class RepetitionMedians(unittest.TestCase):
    """reps.py on issue 31's checked-in lease (tests/data/dist4/steps/
    run3-reps.tgz, r1..r3): the medians and ranges docs/gpu-validation.md
    tabulates from it."""

    def test_checked_in_lease(self):
        rows = {(r["step"], r["schedule"]): r for r in lease_rows("run3-reps.tgz", root=".")}
        self.assertEqual(len(rows), 15)
        tp = rows[("tp_block", "default")]
        self.assertEqual(tp["runs"], ["r1", "r2", "r3"])
        self.assertEqual([round(tp["step_us"][k]) for k in ("median", "min", "max")], [12940, 12915, 12952])
        self.assertAlmostEqual(rows[("tp_block", "recommended")]["vs_default"], -0.034, delta=0.0005)
        self.assertAlmostEqual(rows[("fsdp_fwd_bwd", "schedlab")]["vs_default"], -0.056, delta=0.0005)
        self.assertEqual(rows[("fsdp_fwd_bwd", "recommended")]["peak_above_inputs_bytes"] // 2**20, 2272)
        self.assertFalse(rows[("tp_block", "schedlab")]["deterministic"])
        self.assertIn("| ddp | recommended | 3 | 7960 (7895–8021) | -0.7 % | 258 | 384 | bitwise |",
                      markdown(list(rows.values())))



class PassTiming(unittest.TestCase):
    """pass_timing.py: Inductor's entry points wrapped in every module that
    holds them, and given back; missing ones named, not read as 0 s."""

    def setUp(self):
        import types
        self.calls = []
        fake = types.ModuleType("fakeinductor_passes")

        def outer(x):
            self.calls.append("outer")
            return fake.inner(x) + 1  # a timed pass that calls another timed one

        def inner(x):
            self.calls.append("inner")
            return x * 2

        fake.outer, fake.inner = outer, inner
        user = types.ModuleType("fakeinductor_user")
        user.outer = outer  # imported by name elsewhere (`from .passes import outer`)
        sys.modules["fakeinductor_passes"], sys.modules["fakeinductor_user"] = fake, user
        self.fake, self.user, self.outer, self.inner = fake, user, outer, inner

    def tearDown(self):
        sys.modules.pop("fakeinductor_passes", None)
        sys.modules.pop("fakeinductor_user", None)

    def test_wraps_every_holder_counts_outermost_calls_and_restores(self):
        entries = ("fakeinductor_passes:outer", "fakeinductor_passes:inner", "fakeinductor_passes:gone",
                   "no_such_module_here:f")
        with pass_timing.timed_passes(entries, prefix="fakeinductor") as times:
            self.assertIsNot(self.user.outer, self.outer)  # the by-name import is wrapped too
            self.assertEqual(self.user.outer(3), 7)
            self.assertEqual(self.fake.inner(1), 2)
        self.assertIs(self.fake.outer, self.outer)
        self.assertIs(self.user.outer, self.outer)
        self.assertIs(self.fake.inner, self.inner)
        self.assertEqual(times.calls, {"fakeinductor_passes:outer": 1, "fakeinductor_passes:inner": 1})
        report = times.to_json()
        self.assertEqual(report["not_found"], ["fakeinductor_passes:gone", "no_such_module_here:f"])
        self.assertEqual(set(report["per_pass"]), {"fakeinductor_passes:outer", "fakeinductor_passes:inner"})
        self.assertGreaterEqual(report["total_s"], 0.0)

    def test_restores_after_an_error_inside(self):
        with self.assertRaises(RuntimeError):
            with pass_timing.timed_passes(("fakeinductor_passes:outer",), prefix="fakeinductor"):
                raise RuntimeError("compile failed")
        self.assertIs(self.fake.outer, self.outer)
        self.assertIs(self.user.outer, self.outer)

    def test_schedlab_side_sums_apply_records(self):
        records = [{"seconds": {"export": 0.5, "plan": 1.25}},
                   {"seconds": {"export": 0.25, "plan": 0.5, "agree": 0.01, "peer_wait": 0.75}}, {"seconds": {}}]
        report = pass_timing.schedlab_seconds(records)
        self.assertAlmostEqual(report["per_pass"]["export"]["seconds"], 0.75)
        self.assertAlmostEqual(report["per_pass"]["plan"]["seconds"], 1.75)
        self.assertAlmostEqual(report["total_s"], 2.51)
        self.assertEqual(report["per_pass"]["plan"]["calls"], 3)
        self.assertNotIn("bucket", report["per_pass"])
        self.assertAlmostEqual(report["peer_wait_s"], 0.75)  # apart: not in the total
        with_buckets = pass_timing.schedlab_seconds(records, [{"seconds": 0.125}, {"seconds": 0.25, "peer_wait_s": 0.5}])
        self.assertEqual(with_buckets["per_pass"]["bucket"], {"seconds": 0.375, "calls": 2})
        self.assertAlmostEqual(with_buckets["total_s"], 2.885)
        self.assertAlmostEqual(with_buckets["peer_wait_s"], 1.25)

    def test_a_profiled_block_writes_its_functions_and_none_writes_nothing(self):
        def compile_like():
            return sorted(range(1000), key=lambda i: -i)

        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "compile-profile.rank0.txt"
            with pass_timing.profiled(path):
                compile_like()
            self.assertIn("compile_like", path.read_text())
            with pass_timing.profiled(None):
                compile_like()
            self.assertEqual([p.name for p in Path(tmp).iterdir()], [path.name])

    def test_every_inductor_schedule_but_default_has_entry_points(self):
        self.assertEqual(set(pass_timing.INDUCTOR_PASSES), set(schedules.SCHEDULES) - {"default", *schedules.APPLY_SCHEDULES})


class SecondLease(unittest.TestCase):
    """reps.py --versus-best on the second 4-GPU lease (tests/data/dist4/
    steps/run4-lease.tgz): docs/gpu-validation.md's table "One lease, every
    schedule" is what it gives, row for row."""

    def test_the_documented_table_is_the_data(self):
        rows = lease_rows("run4-lease.tgz")
        self.assertEqual(len(rows), 51)
        self.assertEqual({len(r["runs"]) for r in rows}, {3})
        table = versus_best(rows).splitlines()
        self.assertEqual(len(table), 2 + 11)
        assert_documented(self, table)
        verdicts = verdicts_of(table)
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"),
                         ["ddp_buckets", "fsdp", "fsdp_fwd_bwd_bucketed", "llama_fsdp_per_param", "tp_block"])
        self.assertEqual(verdicts["fsdp_fwd_bwd"], "no, slower")


class H200Lease(unittest.TestCase):
    """reps.py on the 4 x H200 lease (tests/data/dist4/steps/run5-h200-lease.tgz):
    docs/gpu-validation.md's tables "The same steps on 4 x H200" are what it
    gives, row for row; fx_overlap_schedlab (schedlab's model deciding
    Inductor's FX pass) is never taken for Inductor's best configuration."""

    def test_the_documented_tables_are_the_data(self):
        rows = lease_rows("run5-h200-lease.tgz")
        self.assertEqual(len(rows), 58)
        best = versus_best(rows).splitlines()
        estimator = versus(rows, "fx_overlap_schedlab", "fx_overlap").splitlines()
        self.assertEqual((len(best), len(estimator)), (2 + 11, 2 + 7))
        assert_documented(self, best + estimator)
        self.assertFalse(any("fx_overlap_schedlab:" in line for line in best))
        verdicts = verdicts_of(best)
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"),
                         ["ddp_buckets", "fsdp_fwd_bwd_bucketed", "tp_block"])
        self.assertEqual(verdicts["fsdp_fwd_bwd"], "no, slower")
        self.assertFalse(any(line.endswith("| no, slower |") for line in estimator))

    def test_versus_a_schedule_not_measured_is_refused(self):
        # reps.py --versus names the schedule the lease lacks, exit 2 (run6 ran no fx_overlap_schedlab).
        with extracted("run6-h200-refit.tgz") as tmp:
            done = subprocess.run([sys.executable, str(ROOT / "python" / "dist" / "reps.py"), str(tmp / "steps"),
                                   "--versus", "fx_overlap_schedlab", "fx_overlap"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--versus: fx_overlap_schedlab: not measured in", done.stderr)
        self.assertEqual(done.stdout, "")

    def test_peer_waits_of_a_rank_file_without_a_kernel_name_is_refused(self):
        # reps.py --peer-waits on a lease whose collective lacks its kernel's name: one line naming the cell, exit 1.
        with extracted("run6-h200-refit.tgz") as tmp:
            rank_file = tmp / "steps" / "r1" / "ddp" / "default" / "rank0.json"
            result = json.loads(rank_file.read_text())
            del result["profile"]["collectives"][0]["kernel"]
            rank_file.write_text(json.dumps(result))
            done = subprocess.run([sys.executable, str(ROOT / "python" / "dist" / "reps.py"), str(tmp / "steps"),
                                   "--peer-waits"], capture_output=True, text=True)
        self.assertEqual((done.returncode, done.stdout), (1, ""))
        self.assertRegex(done.stderr, r"^reps: .*r1/ddp/default: a rank file lacks 'kernel'\n$")

    def test_the_refitted_launch_is_documented(self):
        # The second launch, schedlab planned on the refitted profiles
        # (tests/data/dist4/steps/run6-h200-refit.tgz).
        rows = lease_rows("run6-h200-refit.tgz")
        self.assertEqual((len(rows), {len(r["runs"]) for r in rows}), (25, {3}))
        best = versus_best(rows).splitlines()
        assert_documented(self, best)
        verdicts = verdicts_of(best)
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"), ["ddp", "fsdp_fwd_bwd_bucketed", "tp_block"])
        self.assertNotIn("no, slower", verdicts.values())


class LeaseTables:
    """A lease's TestCase mixin: its rows (ARCHIVE's), read once, and the
    tables docs/gpu-validation.md shows of them, checked as documented."""

    ARCHIVE = ""

    @classmethod
    def setUpClass(cls):
        cls.rows = lease_rows(cls.ARCHIVE)

    def documented(self, rows: int, tables: list[str]) -> list[str]:
        """Asserts the lease's rows (three runs each) and that every line of
        `tables` is in the doc; returns `tables`."""
        self.assertEqual((len(self.rows), {len(r["runs"]) for r in self.rows}), (rows, {3}))
        assert_documented(self, "\n".join(tables).splitlines())
        return tables


def defer_tables(rows: list[dict]) -> list[str]:
    """schedlab_bucket_defer against the best Inductor configuration, against
    schedlab_bucket, and every cell: the tables of session 20's leases."""
    return [versus_best(rows, "schedlab_bucket_defer"), versus(rows, "schedlab_bucket_defer", "schedlab_bucket"), markdown(rows)]


class BucketingLease(LeaseTables, unittest.TestCase):
    """Session 18's lease of 4 x H200 (tests/data/dist4/steps/
    run8-h200-bucket.tgz): apply's bucketing (schedlab_bucket) beside
    schedlab and Inductor's configurations, the tables docs/gpu-validation.md
    shows, and the decisions the ranks took."""

    ARCHIVE = "run8-h200-bucket.tgz"

    def test_the_tables_are_documented(self):
        tables = self.documented(48, [versus_best(self.rows, "schedlab_bucket"), versus_best(self.rows),
                                      versus(self.rows, "schedlab_bucket", "schedlab")])
        bucket, plain, against = (table.splitlines() for table in tables)
        self.assertEqual((len(bucket), len(plain), len(against)), (10, 10, 10))
        # schedlab_bucket is schedlab's: never "the best other configuration" of schedlab's row
        self.assertFalse(any("schedlab_bucket:" in line for line in plain))
        verdicts = verdicts_of(bucket)
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"), ["ddp", "fsdp", "tp_block"])
        self.assertEqual(verdicts["fsdp_fwd_bwd"], "no, slower")
        gain = {line.split(" | ")[0].lstrip("| "): line.split(" | ")[3] for line in against[2:]}
        self.assertEqual(gain["llama_fsdp_per_param"], "-3.2 %")

    def test_versus_best_of_a_schedule_not_measured_is_refused(self):
        with extracted("run8-h200-bucket.tgz") as tmp:
            done = subprocess.run([sys.executable, str(ROOT / "python" / "dist" / "reps.py"), str(tmp / "steps"),
                                   "--versus-best", "fx_overlap_schedlab"], capture_output=True, text=True)
        self.assertEqual((done.returncode, done.stdout), (2, ""))
        self.assertIn("--versus-best: fx_overlap_schedlab: not measured in", done.stderr)

    def test_every_rank_and_run_took_one_decision_and_inductor_made_the_predicted_buckets(self):
        with extracted("run8-h200-bucket.tgz") as tmp:
            decisions: dict = {}
            for rank_file in sorted((tmp / "steps").glob("r*/*/schedlab_bucket/rank*.json")):
                step = rank_file.parent.parent.name
                for b in json.loads(rank_file.read_text())["bucketings"]:
                    self.assertIsNone(b["fallback_reason"])
                    decisions.setdefault((step, b["index"]), set()).add(json.dumps(b["applied_mib"], sort_keys=True))
                    if rank_file.name == "rank0.json" and b["applied_mib"]:
                        chosen = next(c for c in b["candidates"] if c["caps_mib"] == b["chosen_mib"])
                        # The compiled graph holds as many collectives of the kind as the plan predicted buckets.
                        graph = json.loads((rank_file.parent / f"{step}_{b['index']}.rank0.post.json").read_text())
                        collectives = [n for n in graph["nodes"] if n["kind"] == "collective"]
                        self.assertEqual(len(collectives), chosen["buckets"], (step, b["index"]))
            self.assertTrue(all(len(v) == 1 for v in decisions.values()), decisions)
            bucketed = {k: json.loads(next(iter(v))) for k, v in decisions.items() if next(iter(v)) != "{}"}
            self.assertEqual(sorted(bucketed), [("fsdp", 1), ("llama_fsdp_per_param", 0), ("llama_fsdp_per_param", 1)])
            self.assertEqual(sorted(bucketed[("llama_fsdp_per_param", 0)]), ["all_gather"])

    def test_the_larger_caps_trial_is_documented(self):
        # The trial ladder of caps (run9-h200-larger-caps.tgz): the simulation chose larger
        # reduce-scatter buckets on three graphs, and each ran no faster than schedlab.
        rows = lease_rows("run9-h200-larger-caps.tgz")
        self.assertEqual((len(rows), {len(r["runs"]) for r in rows}), (12, {3}))
        against = versus(rows, "schedlab_bucket", "schedlab").splitlines()
        assert_documented(self, against + markdown(rows).splitlines())
        verdicts = verdicts_of(against)
        self.assertEqual(verdicts, {"fsdp": "no, slower", "fsdp_fwd_bwd": "no (ranges overlap)", "llama_fsdp": "no, slower"})
        with extracted("run9-h200-larger-caps.tgz") as tmp:
            chosen = {(f.parent.parent.name, b["index"]): b["applied_mib"]
                      for f in (tmp / "steps").glob("r1/*/schedlab_bucket/rank0.json")
                      for b in json.loads(f.read_text())["bucketings"] if b["applied_mib"]}
        self.assertEqual({k: {kind: round(mib) for kind, mib in v.items()} for k, v in chosen.items()},
                         {("fsdp", 1): {"reduce_scatter": 362}, ("fsdp_fwd_bwd", 0): {"reduce_scatter": 724},
                          ("llama_fsdp", 1): {"reduce_scatter": 2000}})

    @unittest.skipUnless(os.environ.get("SCHEDLAB_BIN"), "SCHEDLAB_BIN not set")
    def test_todays_model_decides_the_leases_fx_graphs_as_measured(self):
        # The FX graphs apply planned in run8 (rank 0, r1), decided again as apply
        # decides today (fx_bucketing.choose, the run's options): bucketing where it
        # measured faster (fsdp's backward, llama_fsdp_per_param's forward), none on the
        # graphs whose larger buckets measured slower in run9 or were never tried.
        from schedlab_export import fx_bucketing
        from schedlab_export.apply import run_plan

        binary = os.environ["SCHEDLAB_BIN"]
        caps = fx_bucketing.caps_from_cli(binary, "h200", 4, 60)
        decided = {}
        with extracted("run8-h200-bucket.tgz") as tmp:
            for path in sorted((tmp / "steps" / "r1").glob("*/schedlab_bucket/*.rank0.fx.json")):
                graph = json.loads(path.read_text())
                present = Counter(fx_bucketing.bucketable_kind(n["kernel"].removeprefix("torch.ops."))
                                  for n in graph["nodes"] if n["kind"] == "collective")
                present.pop(None, None)
                decision = fx_bucketing.choose(
                    graph, caps, present, ["overlap_schedule_step"],
                    lambda g, passes, knobs: run_plan(g, binary=binary, memory_methods=["baseline", "lpmf", "bfs", "dfs"],
                                                      comm_passes=passes, hardware="h200", comm_knobs=knobs))
                decided[path.name.split(".")[0]] = {k: round(v) for k, v in decision["chosen_mib"].items()}
        self.assertEqual(len(decided), 12)
        self.assertEqual({k: v for k, v in decided.items() if v},
                         {"fsdp_fx1": {"reduce_scatter": 181}, "llama_fsdp_per_param_fx0": {"all_gather": 181}})



class DeferLease(LeaseTables, unittest.TestCase):
    """Session 20's lease of 4 x H200 (tests/data/dist4/steps/
    run11-h200-defer.tgz): schedlab_bucket_defer (defer_stalled_compute after
    overlap_schedule_step) beside every Inductor configuration and
    schedlab_bucket; the tables docs/gpu-validation.md shows."""

    ARCHIVE = "run11-h200-defer.tgz"

    def test_the_tables_are_documented(self):
        tables = self.documented(48, defer_tables(self.rows) + [compile_seconds(self.rows)])
        verdicts = verdicts_of(tables[0].splitlines())
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"),
                         ["ddp", "fsdp", "fsdp_fwd_bwd", "llama_fsdp_per_param", "tp_block"])
        self.assertFalse([s for s, v in verdicts.items() if v == "no, slower"])
        against_bucket = verdicts_of(tables[1].splitlines())
        self.assertEqual(against_bucket["fsdp_fwd_bwd"], "yes, faster")
        self.assertEqual(against_bucket["fsdp"], "no, slower")  # another bucketing decision (the doc says why)

    def test_the_cells_ran_what_they_say(self):
        # B's cells ran schedlab_bucket's schedule with the pass after --comm-passes; their
        # `schedule` is the one run_steps.py now has for it, and six steps ran the same plans.
        same = []
        with extracted("run11-h200-defer.tgz") as tmp:
            for run in sorted((tmp / "steps").glob("r*")):
                for step in sorted(p for p in run.iterdir() if p.is_dir()):
                    a = json.loads((step / "schedlab_bucket" / "rank0.json").read_text())
                    b = json.loads((step / "schedlab_bucket_defer" / "rank0.json").read_text())
                    self.assertEqual(b["schedule"], "schedlab_bucket_defer")
                    self.assertEqual(b["comm_passes"], schedules.apply_comm_passes("schedlab_bucket_defer", a["comm_passes"]))
                    if [g["emitted_order"] for g in a["graphs"]] == [g["emitted_order"] for g in b["graphs"]]:
                        same.append(step.name)
        self.assertEqual(sorted(set(same)), ["ddp", "fsdp_fwd_bwd_bucketed", "llama_fsdp", "llama_fsdp_per_param",
                                             "tp_block", "tp_microbatch"])
        self.assertEqual(len(same), 18)  # every run of those six


class FsdpLease(LeaseTables, unittest.TestCase):
    """Session 20's second lease of 4 x H200 (tests/data/dist4/steps/
    run12-h200-fsdp.tgz): the five FSDP steps, schedlab_bucket_defer beside
    every other schedule in one launch per repetition."""

    ARCHIVE = "run12-h200-fsdp.tgz"

    def test_the_tables_are_documented(self):
        tables = self.documented(25, defer_tables(self.rows))
        verdicts = verdicts_of(tables[0].splitlines())
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"),
                         ["fsdp_fwd_bwd", "fsdp_fwd_bwd_bucketed", "llama_fsdp_per_param"])
        self.assertEqual([s for s, v in verdicts.items() if v == "no, slower"], ["llama_fsdp"])
        # The FSDP target: at least 10 % below the default on two steps.
        below = {r["step"]: r["vs_default"] for r in self.rows if r["schedule"] == "schedlab_bucket_defer"}
        self.assertEqual(sorted(s for s, v in below.items() if v <= -0.10), ["fsdp_fwd_bwd", "fsdp_fwd_bwd_bucketed"])


class CompileLease(LeaseTables, unittest.TestCase):
    """Session 19's lease of 4 x H200 (tests/data/dist4/steps/
    run10-h200-compile.tgz): apply's export without Inductor's runtime
    estimates and its wait for peers apart; the tables docs/gpu-validation.md
    shows."""

    ARCHIVE = "run10-h200-compile.tgz"

    def test_the_tables_are_documented(self):
        tables = self.documented(48, [compile_seconds(self.rows), versus_best(self.rows), versus_best(self.rows, "schedlab_bucket"),
                                      versus(self.rows, "schedlab_bucket", "schedlab"), markdown(self.rows)])
        verdicts = verdicts_of(tables[2].splitlines())
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "yes, faster"),
                         ["ddp", "fsdp", "llama_fsdp_per_param", "tp_block"])
        self.assertEqual(sorted(s for s, v in verdicts.items() if v == "no, slower"), ["fsdp_fwd_bwd", "llama_fsdp"])
        # schedlab's own seconds per graph are below Inductor's FX overlap scheduling on every step
        below = [line.split(" | ")[-2] for line in tables[0].splitlines()[2:]]
        self.assertEqual(sum(b == "yes" for b in below), 5)
        self.assertTrue(all(b == "yes" or "fx_overlap" not in b for b in below))

    def test_export_and_agreement_before_and_after(self):
        # Per graph, rank 0, the median of the runs: run8 exported with Inductor's runtime
        # estimates and counted the wait for peers in its agreement; run10 does neither.
        def seconds(archive: str) -> dict:
            per: dict = {}
            with extracted(archive) as tmp:
                for rank0 in (tmp / "steps").glob("r*/*/schedlab/rank0.json"):
                    result = json.loads(rank0.read_text())
                    parts, graphs = result["pass_seconds"]["per_pass"], len(result["graphs"])
                    per.setdefault(rank0.parent.parent.name, []).append(
                        tuple(1000 * parts[k]["seconds"] / graphs for k in ("export", "agree", "plan")))
            return {step: [round(statistics.median(v[i] for v in runs), 1) for i in range(3)] for step, runs in per.items()}

        before, after = seconds("run8-h200-bucket.tgz"), seconds("run10-h200-compile.tgz")
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for step in sorted(before):
            b, a = before[step], after[step]
            self.assertIn(f"| {step} | {b[0]} / {a[0]} | {b[1]} / {a[1]} | {b[2]} / {a[2]} |", doc)
            self.assertLess(a[0], b[0])  # every step's export is faster without Inductor's estimates

    def test_the_waits_for_later_peers_are_documented(self):
        # Four leases, both chips: a collective beside compute waits longer for a
        # later peer than an exposed one, every kind, every lease.
        doc = (ROOT / "docs" / "gpu-validation.md").read_text()
        for archive in ("run4-lease.tgz", "run5-h200-lease.tgz", "run8-h200-bucket.tgz", "run10-h200-compile.tgz"):
            with extracted(archive) as tmp:
                table = peer_wait_table(tmp / "steps")
            self.assertIn(table, doc)
            mean = {(c[0].lstrip("| "), c[1]): float(c[3]) for c in (line.split(" | ") for line in table.splitlines()[2:])}
            for kind in ("all_gather", "reduce_scatter", "all_reduce"):
                self.assertGreater(mean[(kind, "beside compute")], mean[(kind, "exposed")], (archive, kind))


if __name__ == "__main__":
    unittest.main()
