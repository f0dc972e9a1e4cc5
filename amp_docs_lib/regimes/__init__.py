"""amp_docs_lib.regimes."""
