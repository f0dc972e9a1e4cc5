"""Developer tools that check the site machinery from outside a build; no build imports them.

* ``build_bench``: ``amp-docs bench-build``, cold, no-op and incremental build times on a copy of the checkout;
* ``reproducible``: ``python -m amp_docs_lib.devtools.reproducible``, two cold builds give the same pages.

They sit between ``docsite`` (which they drive) and ``cli`` (which runs them) in the layer contract.
"""
