"""amp_docs_lib.amp."""
