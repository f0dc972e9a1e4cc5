"""amp_docs_lib.numbers."""
