"""CPU-side checks of python/zoo/ncu_traffic.py (Nsight Compute's traffic
counts of a case's Triton kernels): its reading of ncu's CSV, its errors,
and what the checked-in counts (tests/data/experiments/ncu_traffic) say of
an H200's DRAM: GAT's two largest kernels solve to reads near the
datasheet's bandwidth and writes at well under it, what the scatter law's
write_back_factor prices (docs/cost-model.md)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "zoo"))

import ncu_traffic as nt  # noqa: E402

DATA = ROOT / "tests" / "data" / "experiments" / "ncu_traffic" / "h200"
HEADER = '"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'


class Report(unittest.TestCase):
    def test_rows_become_one_record_a_kernel_in_launch_order(self):
        text = ("==PROF== Connected to process 1\n" + HEADER +
                '"10","triton_b","dram__bytes_write.sum","Mbyte","1,500.5"\n'
                '"2","triton_a","gpu__time_duration.sum","usecond","12.5"\n'
                '"2","triton_a","lts__t_sector_hit_rate.pct","%","54.5"\n'
                '"2","triton_a","sm__cycles_elapsed.avg","cycle","7"\n')
        self.assertEqual(nt.parse_report(text), [{"kernel": "triton_a", "duration_ns": 12500.0, "l2_hit_pct": 54.5},
                                                 {"kernel": "triton_b", "dram_write_bytes": 1.5005e9}])

    def test_a_unit_it_does_not_know_is_kept_beside_the_value(self):
        rows = nt.parse_report(HEADER + '"0","triton_a","dram__bytes_read.sum","Tbyte","2"\n')
        self.assertEqual(rows, [{"kernel": "triton_a", "dram_read_bytes": 2.0, "dram_read_bytes_unit": "Tbyte"}])

    def test_rows_it_cannot_read_are_errors_naming_the_row(self):
        with self.assertRaisesRegex(ValueError, r"row 1: dram__bytes_read.sum is 'n/a', not a number"):
            nt.parse_report(HEADER + '"0","triton_a","dram__bytes_read.sum","byte","n/a"\n')
        with self.assertRaisesRegex(ValueError, r"row 1: no column 'Metric Unit'"):
            nt.parse_report('"ID","Kernel Name","Metric Name","Metric Value"\n"0","triton_a","dram__bytes_read.sum","2"\n')

    def test_arguments(self):
        for argv, says in ((["gat_step"], "--out is required"), ([], "the following arguments are required: CASE"),
                           (["--out", "/no/such/folder/x.json", "gat_step"], "--out: /no/such/folder is not a folder")):
            err = io.StringIO()
            with contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
                nt.main(argv)
            self.assertEqual(e.exception.code, 2)
            self.assertIn(says, err.getvalue())

    def test_without_ncu_it_says_where_it_looked(self):
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(nt, "NCU", f"{tmp}/ncu"), \
                contextlib.redirect_stderr(err), self.assertRaises(SystemExit) as e:
            nt.main(["--out", f"{tmp}/x.json", "gat_step"])
        self.assertEqual(e.exception.code, 2)
        self.assertIn("/ncu: no Nsight Compute there (set NCU to its ncu)", err.getvalue())


class H200Counts(unittest.TestCase):
    def kernels(self, case):
        data = json.loads((DATA / f"{case}.json").read_text())
        self.assertEqual(data["format"], "ncu_traffic/1")
        # the file is what parse_report makes of ncu's report kept beside it
        self.assertEqual(data["cases"][case], nt.parse_report((DATA / f"{case}.csv").read_text()))
        return data["cases"][case]

    def test_gat_writes_cost_more_than_reads(self):
        """GAT's forward scatter (writes half its traffic) and backward
        scatter reduction (a fifth) take time t = R / read rate + W / write
        rate: reads at the datasheet's 4.8 TB/s, writes at 0.56 of it."""
        big = {k["kernel"].split("_")[-1]: k for k in self.kernels("gat_step") if k["duration_ns"] > 500e3}
        self.assertEqual(sorted(big), ["13", "8"])
        (r1, w1, t1), (r2, w2, t2) = ((k["dram_read_bytes"], k["dram_write_bytes"], k["duration_ns"]) for k in (big["8"], big["13"]))
        det = r1 * w2 - r2 * w1
        per_read = (t1 * w2 - t2 * w1) / det  # ns a byte
        per_write = (r1 * t2 - r2 * t1) / det
        self.assertAlmostEqual(1e-3 / per_read, 4.74, delta=0.05)  # TB/s (a byte a ns is a GB/s)
        self.assertAlmostEqual(1e-3 / per_write, 2.68, delta=0.05)
        self.assertAlmostEqual(per_write / per_read, 1.77, delta=0.02)

    def test_the_gather_scatter_experiment_was_counted_whole(self):
        kernels = self.kernels("gather_scatter_sweep")
        scatters = [k for k in kernels if "index_add" in k["kernel"]]
        self.assertEqual(len(scatters), 14)  # its 14 message-passing kernels (tests/data/experiments/gather_scatter)
        for k in scatters:
            self.assertTrue({"dram_read_bytes", "dram_write_bytes", "l2_sectors", "l2_hit_pct", "duration_ns"} <= k.keys(), k["kernel"])


if __name__ == "__main__":
    unittest.main()
