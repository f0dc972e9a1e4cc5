"""amp_docs_lib.page."""
