"""The simulated scenarios behave as their names say, through the scaler's real update rule."""

import math

import pytest

from amp_docs_lib.amp.scale_dynamics import (REMEDIES, SCENARIOS, plot_scale, remedy_table,
                                         scenario, simulate)


def test_healthy_scale_grows_and_rarely_skips():
    df = simulate(scenario("healthy", steps=600))
    assert df["scale"].iloc[-1] >= 2**4 * df["scale"].iloc[0]
    assert df["skipped"].mean() < 0.05
    assert df["loss"].iloc[-1] < 1e-3 * df["loss"].iloc[0]


def test_periodic_overflow_backs_off_at_spikes():
    df = simulate(scenario("periodic overflow", steps=600))
    sc = SCENARIOS["periodic overflow"]
    spikes = {t for t in range(600) if t % sc.spike_every == sc.spike_every - 1}
    skipped = set(df.index[df["skipped"]])
    assert len(spikes & skipped) >= 0.8 * len(spikes)  # (a spike on a small noise draw may fit)
    assert len(skipped - spikes) <= 2  # other skips: only the initial calibration
    assert all(df["scale"].iloc[t + 1] < df["scale"].iloc[t] for t in skipped)


def test_death_spiral_collapses_scale_and_skips_everything():
    df = simulate(scenario("death spiral", steps=400))
    assert df["scale"].iloc[-1] == 0.0
    assert df["skipped"].iloc[-100:].all()
    assert df["skipped"].mean() > 0.9


def test_remedies():
    t = remedy_table("death spiral").set_index("remedy")
    assert set(t.index) == set(REMEDIES)
    assert not t.loc["higher initial scale", "loss decreased"]
    assert t.loc["lower learning rate", "loss decreased"]
    assert t.loc["lower learning rate", "skipped steps"] < 0.05
    assert t.loc["gradient clipping", "skipped steps"] < 0.05
    assert t.loc["BF16 (no scaler)", "skipped steps"] == 0.0
    assert not math.isfinite(t.loc["BF16 (no scaler)", "final loss"])  # divergence is not a range problem


def test_bad_names():
    with pytest.raises(ValueError, match="valid"):
        scenario("healthy-ish")
    with pytest.raises(ValueError, match="unknown scenario fields"):
        scenario("healthy", learning_rate=1.0)
    with pytest.raises(ValueError, match="valid"):
        simulate(scenario("healthy", precision="fp8"))
    with pytest.raises(TypeError):
        simulate("healthy")


def test_plot_returns_figure():
    import matplotlib.pyplot as plt
    fig = plot_scale({"death spiral": simulate(scenario("death spiral", steps=300))})
    assert len(fig.axes) == 1
    plt.close(fig)


def test_megatron_rule_hysteresis_and_floor():
    from amp_docs_lib.amp.scale_dynamics import scenario, simulate, update_scale_megatron

    # hysteresis 2: the first overflow only uses up hysteresis, the second backs off
    s, g, h = update_scale_megatron(8.0, 5, 2, True, 2.0, 0.5, 10, 1.0, 2)
    assert (s, g, h) == (8.0, 0, 1)
    s, g, h = update_scale_megatron(s, g, h, True, 2.0, 0.5, 10, 1.0, 2)
    assert s == 4.0
    # the floor
    assert update_scale_megatron(1.0, 0, 0, True, 2.0, 0.5, 10, 1.0, 2)[0] == 1.0
    # growth refills the hysteresis
    assert update_scale_megatron(4.0, 9, 0, False, 2.0, 0.5, 10, 1.0, 2) == (8.0, 0, 2)
    # torch's rule is the case hysteresis 1, floor 0
    assert update_scale_megatron(4.0, 3, 1, True, 2.0, 0.5, 10, 0.0, 1)[0] == 2.0
    death = simulate(scenario("death spiral", min_scale=1.0, hysteresis=2))
    assert death["scale"].iloc[-1] == 1.0 and death["skipped"].mean() > 0.9
