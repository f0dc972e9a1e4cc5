"""Training regimes measured: one seeded GPT run per regime, the optimizers that differ, the figures.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* data (``corpus``): ``MarkovSource``, ``Corpus``, ``make_corpus``;
* optimizers (``optimizers``): ``MasterWeights``, ``RoundedStateAdamW``, ``kahan_adamw``, ``stochastic_round_adamw``, ``plain_optimi_adamw``, ``gradient_bytes``, ``optimizer_state_bytes``, ``make_optimizer``;
* rounding experiments (``rounding``): ``bf16_stochastic_round``, ``second_moment_changes``, ``second_moment_decay``, ``optimizer_second_moment_decay``, ``weight_decay_drift``, ``fp16_second_moment_threshold``;
* training runs (``loop``): ``TrainConfig``, ``model_config``, ``corpus_from_profile``, ``RunResult``, ``global_grad_norm``, ``fp32_cross_entropy``, ``evaluate``, ``train_regime``, ``allocator_check``, ``saved_for_backward``, ``step_speed``, ``run_regimes``, ``summary_table``, ``with_steps``, ``replay_scale``, ``naive_fp16_first_step``;
* figures (``plots``): ``plot_losses``, ``plot_loss_vs_baseline``, ``plot_grad_norm``, ``plot_loss_scale``, ``plot_speed``, ``plot_memory``, ``plot_unchanged``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # data
    "corpus": ("MarkovSource", "Corpus", "make_corpus",),
    # optimizers
    "optimizers": ("MasterWeights", "RoundedStateAdamW", "kahan_adamw", "stochastic_round_adamw", "plain_optimi_adamw", "gradient_bytes", "optimizer_state_bytes", "make_optimizer",),
    # rounding experiments
    "rounding": ("bf16_stochastic_round", "second_moment_changes", "second_moment_decay", "optimizer_second_moment_decay", "weight_decay_drift", "fp16_second_moment_threshold",),
    # training runs
    "loop": ("TrainConfig", "model_config", "corpus_from_profile", "RunResult", "global_grad_norm", "fp32_cross_entropy", "evaluate", "train_regime", "allocator_check", "saved_for_backward", "step_speed", "run_regimes", "summary_table", "with_steps", "replay_scale", "naive_fp16_first_step",),
    # figures
    "plots": ("plot_losses", "plot_loss_vs_baseline", "plot_grad_norm", "plot_loss_scale", "plot_speed", "plot_memory", "plot_unchanged",),
})
