"""compare's summaries: cut ratios, the performance profile, tables, CSV; graph sets."""
import math

import pytest

import matchpart
from matchpart import compare as cmp


def row(graph, matcher, cut, feasible=3, time=1.0):
    return {"graph": graph, "k": 4, "matcher": matcher, "median_cut": cut, "feasible": feasible, "runs": 3,
            "median_time": time, "cuts": [cut] * 3}


ROWS = [row("g1", "a", 100), row("g1", "b", 110), row("g1", "c", 90, feasible=2),  # c broke the bound
        row("g2", "a", 60), row("g2", "b", 50), row("g2", "c", 50),
        row("g3", "a", 0), row("g3", "b", 4), row("g3", "c", 0)]


def test_cut_ratios_and_profile():
    r = cmp.cut_ratios(ROWS)
    assert r["a"] == [1.0, 1.2, 1.0] and r["b"] == [1.1, 1.0, math.inf] and r["c"] == [math.inf, 1.0, 1.0]
    profile = cmp.performance_profile(ROWS, taus=(1.0, 1.1, 1.2))
    assert profile == {"a": [2 / 3, 2 / 3, 1.0], "b": [1 / 3, 2 / 3, 2 / 3], "c": [2 / 3, 2 / 3, 2 / 3]}
    summary = {p["matcher"]: p for p in cmp.profile_rows(ROWS)}
    assert summary["a"]["within_1"] == pytest.approx(2 / 3) and summary["b"]["solved"] == 2
    assert summary["a"]["gmean_ratio"] == pytest.approx(1.2 ** (1 / 3))
    table = cmp.format_table(cmp.profile_rows(ROWS), cmp.PROFILE_COLUMNS)
    assert "within 5%" in table and "67%" in table


def test_csv_and_title():
    text = cmp.to_csv(ROWS[:2])
    assert text.splitlines()[0].startswith("graph,k,matcher") and "100;100;100" in text
    assert cmp.default_title(ROWS) == "g1, g2, g3, k=4"
    many = [row(f"g{i}", "a", 1) for i in range(6)]
    assert cmp.default_title(many) == "g0, g1, g2, g3, ... (6 graphs), k=4"


def test_compare_a_list_a_dict_and_a_directory(tmp_path):
    names = matchpart.matchers.available()[:1]
    matchpart.save_graph(matchpart.load_graph("grid:5x5"), tmp_path / "a.graph")
    rows = matchpart.compare([str(tmp_path), "grid:4x4"], 2, names, repeats=1, device="cpu", preset="fast")
    assert [r["graph"] for r in rows] == ["a.graph", "grid:4x4"]
    rows = matchpart.compare({"mine": "grid:4x4"}, 2, names, repeats=2, device="cpu", preset="fast")
    assert rows[0]["graph"] == "mine" and rows[0]["runs"] == 2 and len(rows[0]["cuts"]) == 2
    for key in ("std_cut", "min_time", "median_levels", "matched_fraction", "rounds", "median_comm_volume"):
        assert key in rows[0]


def test_plot_draws_the_profile(tmp_path):
    pytest.importorskip("matplotlib")
    path = cmp.plot(ROWS, tmp_path / "p.png")
    assert path.stat().st_size > 0
