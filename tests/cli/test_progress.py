"""Download progress: the bar gives way to the extraction once it starts (never stuck at 100 %)."""

from __future__ import annotations

import io

from srcreview.cli.progress import _BarReporter, _PlainReporter, live_bar


def test_the_download_bar_gives_way_to_the_extraction():
    from rich.console import Console

    out = io.StringIO()
    with live_bar(Console(file=out, force_terminal=True, width=100)) as bar:
        report = _BarReporter(bar)
        report("vllm-0.29.0.tar.gz", 50, 100)
        report("vllm-0.29.0.tar.gz", 100, 100)
        [download] = bar.tasks
        assert download.visible and download.percentage == 100
        report("extracting vllm-0.29.0.tar.gz", 500, None)
        report("extracting vllm-0.29.0.tar.gz", 1000, None)
        download, extraction = bar.tasks
        assert not download.visible, "the finished download no longer shows 100 % during extraction"
        assert extraction.visible and extraction.total is None
        assert extraction.description == "extracting vllm-0.29.0.tar.gz: 1000 files"
        bar.refresh()
    assert "1000 files" in out.getvalue()


def test_without_a_terminal_each_step_is_one_line(capsys):
    report = _PlainReporter()
    for args in (("vllm-0.29.0.tar.gz", 1, 123_000_000), ("vllm-0.29.0.tar.gz", 2, 123_000_000),
                 ("extracting vllm-0.29.0.tar.gz", 500, None), ("extracting vllm-0.29.0.tar.gz", 1000, None)):
        report(*args)
    assert capsys.readouterr().err == ("srcreview: downloading vllm-0.29.0.tar.gz (123.0 MB)\n"
                                       "srcreview: extracting vllm-0.29.0.tar.gz\n")
