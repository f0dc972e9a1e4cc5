"""Site build machinery: the mkdocs plugin, the execution cache and the passes over every built page.

Executing chapters:

* ``plugin``: the ``amp-docs`` mkdocs plugin (executes chapters through the cache, presents them, runs
  the page passes);
* ``execute``: one chapter executed as the build does (nbclient, a fresh kernel); ``progress``: its lines
  on the terminal;
* ``cache``: executed notebooks reused while nothing they used changed; ``inputs``: what a chapter read,
  as labels and hashes; ``read_recorder`` and ``hide_site/``: the kernel's start-up hook that records
  those reads; ``hashing``: the one tree hasher; ``store``: atomic writes;
* ``env_memo``: the environment report, memoised; ``fragments``: generated HTML, memoised;
  ``up_to_date``: ``amp-docs build`` (build, or say it is up to date); ``checkout``: copies of a
  checkout for throwaway builds;
* ``wheel``: the library's wheel for the downloads; ``downloads``: the download bar and the downloadable
  notebook;
* ``notebook_page`` and ``templates/``: a presented notebook as the Markdown page mkdocs builds.

The passes over every built page (``pages`` lists them in order):

* ``reader_layout``: the layout of a chapter page
  (code ids, claims grouped, the lesson first, search exclusions) with ``folds`` and ``claim_marks`` (a lone
  claim's verdict a tip on its mark, a mixed claim list titled by a legend); ``builder_paths``: no
  path of the building machine; ``math_render`` and ``katex/``: math rendered at build time; ``page_files``: figures and CSV tables as
  files; ``links``: links to chapters in HTML outputs; ``provenance``: one provenance card; ``page_assets``: no
  link to an asset a page does not use; ``subpages``: a long chapter as a chapter page plus sub-pages
  (one notebook sliced at its markers, the nav section, the "Part k of n" line, links to moved anchors);
* ``presented``: the executed notebook as a reader gets it; ``generated_pages``: the profiles table,
  the home page's showcase and "Yours vs reference" (with ``references``); ``api_pages``: the generated
  API reference; ``linkcheck``: every internal link and anchor of a built site resolves (also those in HTML
  outputs, which mkdocs' ``validation:`` does not read).

Developer tools that drive builds from outside (``bench-build``, the reproducibility check) are in
``amp_docs_lib.devtools``.
"""
