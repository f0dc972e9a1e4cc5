"""The page kit chapters call: stamps, tables, figures, claims, snippets, key measurements.

Exports, grouped by role (imported from their modules on first use, so importing one
module never imports the others):

* provenance (``stamp``): ``stamp_text``, ``provenance``, ``Stamped``;
* tables (``tables``): ``table_html``, ``csv_link``, ``StampedTable``, ``NoRows``, ``show_table``, ``show_cards``, ``environment_table``;
* figures (``figures``): ``fit_to_column``, ``show_figure``;
* claims (``claims``): ``ClaimContradicted``, ``format_value``, ``values_match``, ``Claim``, ``MachineFact``, ``claim``, ``on_this_machine``, ``Statement``, ``check_statements``, ``inline_markdown``;
* checks that cannot fail (``claim_lint``): ``LintFinding``, ``lint_source``, ``lint_chapter``;
* example programs (``snippets``): ``example_path``, ``Code``, ``show_source``, ``show_diff``, ``Tabs``, ``show_pattern``, ``SnippetRun``, ``run_snippet``;
* key measurements (``publish``): ``PublishedTable``, ``publish``, ``measurements_from_notebook``;
* notebook or plain script (``notebook``): ``in_ipython``, ``display``, ``PlainText``, ``Markdown``, ``shown_in_scripts``, ``gated_source``, ``ungated_source``, ``load_ipython_extension``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    # provenance
    "stamp": ("stamp_text", "provenance", "Stamped",),
    # tables
    "tables": ("table_html", "csv_link", "StampedTable", "NoRows", "show_table", "show_cards", "environment_table",),
    # figures
    "figures": ("fit_to_column", "show_figure",),
    # claims
    "claims": ("ClaimContradicted", "format_value", "values_match", "Claim", "MachineFact", "claim", "on_this_machine", "Statement", "check_statements", "inline_markdown",),
    # checks that cannot fail
    "claim_lint": ("LintFinding", "lint_source", "lint_chapter",),
    # example programs
    "snippets": ("example_path", "Code", "show_source", "show_diff", "Tabs", "show_pattern", "SnippetRun", "run_snippet",),
    # key measurements
    "publish": ("PublishedTable", "publish", "measurements_from_notebook",),
    # notebook or plain script
    "notebook": ("in_ipython", "display", "PlainText", "Markdown", "shown_in_scripts", "gated_source", "ungated_source", "load_ipython_extension",),
})
