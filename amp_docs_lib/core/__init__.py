"""amp_docs_lib.core."""
