"""Number formats: the registry of every format the site discusses, and the Formats chapter's experiments.

Exports, by role (each imported from its module on first use, so importing one module never
imports the others); everything else, the chapters' page builders included, is imported from its
module (``from amp_docs_lib.numbers.<module> import <name>``):

* the format registry: (``formats``) ``NumberFormat``, ``get_format``, ``format_names``, ``float_format_names``, ``bytes_per_element``, ``format_table``;
* bits and values: (``formats``) ``encode``, ``decode``, ``decode_table``, ``next_up``;
* accounting, the one home of FLOP and byte counts: (``accounting``) ``matmul_flops``, ``state_bytes``;
* numerics experiments: (``numerics``) ``spacing_vs_magnitude``, ``softplus_stable``, ``softmax_stable``.
"""

from amp_docs_lib.core.exports import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "the format registry": {
            "formats": (
                "NumberFormat",
                "get_format",
                "format_names",
                "float_format_names",
                "bytes_per_element",
                "format_table",
            ),
        },
        "bits and values": {
            "formats": (
                "encode",
                "decode",
                "decode_table",
                "next_up",
            ),
        },
        "accounting, the one home of FLOP and byte counts": {
            "accounting": (
                "matmul_flops",
                "state_bytes",
            ),
        },
        "numerics experiments": {
            "numerics": (
                "spacing_vs_magnitude",
                "softplus_stable",
                "softmax_stable",
            ),
        },
    },
)
