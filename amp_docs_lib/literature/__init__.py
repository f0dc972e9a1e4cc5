"""The literature, tested: claims of the papers and guides, this build's verdicts, the bibliography.

Exports, by role:

* the registry: ``LiteratureClaim``, ``CLAIMS``, ``get_claim``, ``split_test``, ``site_url``,
  ``heading_text``;
* rendering the chapter: ``reading_map``, ``section_links``, ``tests_html``, ``verdict_summary``,
  ``machine_facts``; the falsifiability check ``unfalsifiable``;
* verdicts: ``Verdict``, ``VERDICTS`` and its values ``HOLDS``, ``DOES_NOT_HOLD``, ``HOLDS_HERE``,
  ``NOT_HERE``, ``NOT_TESTABLE``; ``judged``, ``needs``, ``needs_scale``;
* the bibliography: ``BIB_PATH``, ``load_bibliography``, ``bibliography``, ``identifiers``,
  ``arxiv_id_ok``, ``DOI``.
"""

from amp_docs_lib.literature.bibliography import (BIB_PATH, DOI, arxiv_id_ok, bibliography, identifiers,
                                                  load_bibliography)
from amp_docs_lib.literature.registry import (CLAIMS, LiteratureClaim, get_claim, heading_text, machine_facts,
                                              reading_map, section_links, site_url, split_test, tests_html,
                                              unfalsifiable, verdict_summary)
from amp_docs_lib.literature.verdicts import (DOES_NOT_HOLD, HOLDS, HOLDS_HERE, NOT_HERE, NOT_TESTABLE, VERDICTS,
                                              Verdict, judged, needs, needs_scale)

__all__ = [
    # registry
    "LiteratureClaim", "CLAIMS", "get_claim", "split_test", "site_url", "heading_text",
    # rendering
    "reading_map", "section_links", "tests_html", "verdict_summary", "machine_facts", "unfalsifiable",
    # verdicts
    "Verdict", "VERDICTS", "HOLDS", "DOES_NOT_HOLD", "HOLDS_HERE", "NOT_HERE", "NOT_TESTABLE",
    "judged", "needs", "needs_scale",
    # bibliography
    "BIB_PATH", "load_bibliography", "bibliography", "identifiers", "arxiv_id_ok", "DOI",
]
