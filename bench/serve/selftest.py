#!/usr/bin/env python3
"""Self-test of the issue-5/7 GPU bench scripts' logic, on the CPU (no GPU, no kz serve):
the labelled batch, the timing agreement, KernelBench's pipeline arguments and summary, and
its pre-compile pool's build limit (a real spawn pool; a build past --compile-timeout is
killed, a quick one is kept). Run by ctest (bench_serve_selftest) with the project's Python.

  python3 bench/serve/selftest.py
"""
import os
import sys
import tempfile
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)   # also for the spawned pool workers, which re-import this module
import gpu_batch  # noqa: E402
import kernelbench_pipeline  # noqa: E402
from kernelbench_precompile import run_precompile  # noqa: E402


class Batch(unittest.TestCase):
    def test_a_batch_covers_every_labelled_sample_with_distinct_texts(self):
        base = gpu_batch.labelled_samples()
        batch = gpu_batch.make_batch(len(base) + 3)
        self.assertEqual({b["name"] for b in batch}, {os.path.basename(s[1]) for s in base})
        keys = [(b["sample"]["task"], b["sample"]["candidate"]) for b in batch]
        self.assertEqual(len(set(keys)), len(keys), "every (task, candidate) distinct: no deduplication")
        self.assertEqual([b["copy"] for b in batch[-3:]], [1, 1, 1])
        self.assertTrue(batch[0]["name"] != batch[1]["name"] and
                        {batch[0]["sample"]["backend"], batch[1]["sample"]["backend"]} <= {"cuda", "triton"})


class Agreement(unittest.TestCase):
    def test_ratios_per_device_of_the_same_sample_and_copy(self):
        def run(rows):
            return {"results": [{"name": n, "copy": c, "device": d, "candidate_us": us} for n, c, d, us in rows]}
        alone = run([("a", 0, 0, 10.0), ("b", 0, 0, 20.0), ("c", 0, 0, None), ("d", 0, 0, 5.0)])
        two = run([("a", 0, 1, 10.5), ("b", 0, 0, 20.0), ("c", 0, 1, 3.0), ("d", 1, 1, 5.0)])
        got = gpu_batch.agreement(alone, two)
        self.assertEqual(got, {1: [("a", 1.05)], 0: [("b", 1.0)]})   # c: no base; d: another copy


class KernelBenchPipeline(unittest.TestCase):
    def test_compile_timeout_defaults_to_the_run_timeout_as_kernelbench(self):
        a = kernelbench_pipeline.parse_args(["--out", "x", "--timeout", "25"])
        self.assertEqual((a.timeout, a.compile_timeout), (25, 25))
        a = kernelbench_pipeline.parse_args(["--out", "x", "--timeout", "25", "--compile-timeout", "180"])
        self.assertEqual(a.compile_timeout, 180)

    def test_summary_counts_cheats_accepted_and_agreement(self):
        def rec(want, correct, compiled=True):
            return {"want": want, "precompile": None, "eval": {"compiled": compiled, "correct": correct}}
        state = {"segments": [{"phase": "precompile", "wall_s": 100.0}, {"phase": "eval", "wall_s": 260.0}],
                 "results": [rec("correct", True), rec("rejected", True), rec("rejected", False),
                             rec("incorrect", True), rec("correct", True, compiled=False)]}
        s = kernelbench_pipeline.summarise(state, [None] * 5)
        self.assertEqual((s["evaluated"], s["agree"], s["cheats_accepted"], s["cheats"]), (5, 2, 1, 2))
        self.assertEqual((s["wrong_accepted"], s["correct_refused"]), (1, 1))
        self.assertAlmostEqual(s["samples_per_gpu_hour"], 5 / 360 * 3600)


class PrecompileLimit(unittest.TestCase):
    def test_a_build_past_the_compile_timeout_is_killed_a_quick_one_kept(self):
        with tempfile.TemporaryDirectory() as tmp:
            batch = [{"sample": {"candidate": "x = 1\n"}},
                     {"sample": {"candidate": "import time\ntime.sleep(300)\n"}}]
            state = {"results": [{"name": "quick.py"}, {"name": "slow.py"}]}
            args = types.SimpleNamespace(out=tmp, build_dir=os.path.join(tmp, "build"), jobs=2, compile_timeout=25)  # the quick one must fit on a loaded 2-core machine
            os.makedirs(args.build_dir)
            self.assertTrue(run_precompile([0, 1], batch, args, state, None, lambda: None))
            quick, slow = (r["precompile"] for r in state["results"])
            self.assertTrue(quick["ok"] and not quick["timed_out"], quick)
            self.assertTrue(slow["timed_out"] and not slow["ok"], slow)
            self.assertLess(slow["seconds"], 90)
            self.assertFalse(os.path.exists(os.path.join(args.build_dir, "0001")), "a timed-out build's dir is removed")


if __name__ == "__main__":
    unittest.main(verbosity=2)
