"""The page kit chapters call: stamps, tables, figures, claims, snippets, key measurements.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.page.<module> import <name>``):

* checked claims: (``claims``) ``claim``, ``on_this_machine``, ``Statement``, ``check_statements``;
* tables and figures: (``tables``) ``show_table``, ``show_cards``; (``figures``) ``show_figure``;
* example programs: (``snippets``) ``show_source``, ``run_snippet``;
* notebook or plain script: (``notebook``) ``display``, ``Markdown``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "checked claims": {
            "claims": (
                "claim",
                "on_this_machine",
                "Statement",
                "check_statements",
            ),
        },
        "tables and figures": {
            "tables": (
                "show_table",
                "show_cards",
            ),
            "figures": ("show_figure",),
        },
        "example programs": {
            "snippets": (
                "show_source",
                "run_snippet",
            ),
        },
        "notebook or plain script": {
            "notebook": (
                "display",
                "Markdown",
            ),
        },
    },
)
