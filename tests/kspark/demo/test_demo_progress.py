"""What the demo shows while the query runs: the live line, or a line per micro-batch."""

from kspark.demo.batches import Batch
from kspark.demo.progress import ProgressDisplay, Snapshot

WATERMARK_MS = 1_741_943_140_000  # 2025-03-14T09:05:40Z


def snapshot(**changes) -> Snapshot:
    batch = Batch(id=3, input_rows=52_000, output_rows=80, duration_ms=2_300,
                  watermark_ms=WATERMARK_MS, dropped_by_watermark=0)
    figures = dict(produced=240_000, records_in=186_000, records_out=320, lag=54_012,
                   last_batch=batch, watermark_ms=WATERMARK_MS)
    return Snapshot(**{**figures, **changes})


def test_the_live_line_shows_the_figures_of_the_moment(capsys):
    display = ProgressDisplay(300_004, quiet=False)
    display.show(snapshot(), [])
    display.close()
    line = capsys.readouterr().err.split("\r")[-1]
    assert line.startswith("records in 186k/300k  62%|")
    for figure in ("produced 240k", "out 320", "lag 54,012", "batch 2.3 s",
                   "watermark 09:05:40"):
        assert figure in line


def test_unknown_figures_show_as_dashes(capsys):
    display = ProgressDisplay(1_000, quiet=False)
    display.show(snapshot(records_in=0, lag=None, last_batch=None, watermark_ms=None), [])
    display.close()
    line = capsys.readouterr().err.split("\r")[-1]
    assert line.startswith("records in 0/1k ")
    assert "lag -, batch -, watermark -" in line


def test_quiet_prints_a_plain_line_per_new_batch(capsys):
    display = ProgressDisplay(300_004, quiet=True)
    current = snapshot()
    display.show(current, [])
    display.show(current, [current.last_batch])
    display.close()
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ("batch 3: 52,000 records in, 80 out, 2.3 s; produced 240,000, "
                            "lag 54,012, watermark 09:05:40\n")
