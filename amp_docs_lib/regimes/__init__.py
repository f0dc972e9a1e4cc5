"""Training regimes measured: one seeded GPT run per regime, the optimizers that differ, the figures.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.regimes.<module> import <name>``):

* data: (``corpus``) ``make_corpus``;
* optimizers: (``optimizers``) ``MasterWeights``, ``kahan_adamw``, ``stochastic_round_adamw``, ``make_optimizer``;
* rounding: (``rounding``) ``bf16_stochastic_round``;
* training runs: (``loop``) ``TrainConfig``, ``model_config``, ``RunResult``, ``train_regime``, ``run_regimes``, ``summary_table``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "data": {
            "corpus": ("make_corpus",),
        },
        "optimizers": {
            "optimizers": (
                "MasterWeights",
                "kahan_adamw",
                "stochastic_round_adamw",
                "make_optimizer",
            ),
        },
        "rounding": {
            "rounding": ("bf16_stochastic_round",),
        },
        "training runs": {
            "loop": (
                "TrainConfig",
                "model_config",
                "RunResult",
                "train_regime",
                "run_regimes",
                "summary_table",
            ),
        },
    },
)
