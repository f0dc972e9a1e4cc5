// Reader features that need the browser (amp_docs_lib/docsite/reader.py does the rest).
// Lightbox links of figures embedded as data URIs carry href="#" instead of a second copy of
// the image; give them their image's src before GLightbox (initialised after this script) reads them.
(function () {
  "use strict";
  document.querySelectorAll("a.glightbox[data-amp-href-from-img]").forEach((a) => {
    const img = a.querySelector("img");
    if (img) a.setAttribute("href", img.getAttribute("src"));
  });
})();
