"""amp_docs_lib: the companion library of the amp-docs site.

One module per concept; the chapters, the examples and the tests all call into it.
"""

__version__ = "0.1.0"
