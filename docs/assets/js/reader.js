// Reader features that need the browser (amp_docs_lib/docsite/pages.py does the rest).
// Each figure has ONE lightbox link around its light and dark renderings; the link opens the
// rendering of the reader's palette, and follows the palette toggle. GLightbox (initialised
// after this script, as `lightbox`) reads the links again when the palette changes.
(function () {
  "use strict";
  const dark = () => document.body.getAttribute("data-md-color-scheme") === "slate";
  function syncLightbox() {
    document.querySelectorAll("a.amp-lightbox").forEach((a) => {
      const img = a.querySelector(dark() ? "img.amp-fig--dark" : "img.amp-fig--light");
      if (img) a.setAttribute("href", img.currentSrc || img.getAttribute("src"));
    });
  }
  syncLightbox();
  new MutationObserver(() => {
    syncLightbox();
    if (typeof lightbox !== "undefined" && lightbox && typeof lightbox.reload === "function") lightbox.reload();
  }).observe(document.body, { attributes: true, attributeFilter: ["data-md-color-scheme"] });
})();
