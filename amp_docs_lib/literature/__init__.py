"""The literature, tested: claims of the papers and guides, this build's verdicts, the bibliography.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.literature.<module> import <name>``):

* the claims: (``registry``) ``LiteratureClaim``, ``CLAIMS``, ``get_claim``;
* verdicts: (``verdicts``) ``Verdict``, ``HOLDS``, ``DOES_NOT_HOLD``, ``HOLDS_HERE``, ``NOT_HERE``, ``NOT_TESTABLE``;
* the reading map: (``registry``) ``reading_map``, ``verdict_summary``, ``section_links``;
* the bibliography: (``bibliography``) ``load_bibliography``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "the claims": {
            "registry": (
                "LiteratureClaim",
                "CLAIMS",
                "get_claim",
            ),
        },
        "verdicts": {
            "verdicts": (
                "Verdict",
                "HOLDS",
                "DOES_NOT_HOLD",
                "HOLDS_HERE",
                "NOT_HERE",
                "NOT_TESTABLE",
            ),
        },
        "the reading map": {
            "registry": (
                "reading_map",
                "verdict_summary",
                "section_links",
            ),
        },
        "the bibliography": {
            "bibliography": ("load_bibliography",),
        },
    },
)
