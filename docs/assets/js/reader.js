// Reader features that need the browser (amp_docs_lib/docsite/pages.py does the rest).

// GLightbox (17 KB gzip with its stylesheet) loads on the first tap on a figure, not with every
// page: pages link neither file (amp_docs_lib/docsite/page_assets.py), and mkdocs-glightbox's
// `const lightbox = GLightbox(options)` gets this stand-in, which loads the real one and opens it
// on the tapped figure; from then on the real GLightbox handles the taps.
(function () {
  "use strict";
  if (typeof window.GLightbox === "function") return; // linked after all: nothing to defer
  const assets = document.currentScript.src.replace(/js\/reader\.js(\?.*)?$/, "");
  let options = {};
  let real = null;
  let loading = null;
  function load() {
    if (!loading) {
      loading = new Promise((resolve, reject) => {
        const css = document.createElement("link");
        css.rel = "stylesheet";
        css.href = assets + "stylesheets/glightbox.min.css";
        document.head.appendChild(css);
        const js = document.createElement("script");
        js.src = assets + "javascripts/glightbox.min.js";
        js.onload = resolve;
        js.onerror = reject;
        document.head.appendChild(js);
      }).then(() => (real = window.GLightbox(options)));
    }
    return loading;
  }
  document.addEventListener(
    "click",
    (event) => {
      const link = !real && event.target.closest && event.target.closest("a.glightbox");
      if (!link) return;
      event.preventDefault();
      event.stopPropagation();
      const index = Array.from(document.querySelectorAll("a.glightbox")).indexOf(link);
      load().then((lightbox) => lightbox.openAt(Math.max(index, 0)));
    },
    true,
  );
  window.GLightbox = function (opts) {
    options = opts || {};
    return {
      reload() {
        if (real) real.reload();
      },
    };
  };
})();

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

// A table wider than its column scrolls in its own box: mark the box (a fade on the side with
// more to see, until the reader reaches the end) and say so under it, once.
(function () {
  "use strict";
  function mark(box) {
    const over = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle("amp-overflowing", over);
    box.classList.toggle("amp-at-end", over && box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
    let hint = box.nextElementSibling;
    const has = hint && hint.classList.contains("amp-scroll-hint");
    if (over && !has) {
      hint = document.createElement("p");
      hint.className = "amp-scroll-hint";
      hint.setAttribute("data-search-exclude", "");
      hint.textContent = "wider than the column: scroll sideways for more columns";
      box.after(hint);
    } else if (!over && has) {
      hint.remove();
    }
  }
  // A table filled by a script (the format explorer) is measured again when its content changes.
  function markAll() {
    document.querySelectorAll(".amp-table-scroll, .amp-fx-scroll, .md-typeset__scrollwrap").forEach((box) => {
      if (!box.dataset.ampObserved) {
        box.dataset.ampObserved = "1";
        new MutationObserver(() => mark(box)).observe(box, { childList: true, subtree: true, characterData: true });
      }
      mark(box);
    });
  }
  document.addEventListener("scroll", (e) => {
    const box = e.target;
    if (box instanceof Element && box.matches(".amp-table-scroll, .amp-fx-scroll, .md-typeset__scrollwrap")) mark(box);
  }, true);
  window.addEventListener("resize", markAll);
  // Folds open later: their tables are measured when shown.
  document.addEventListener("toggle", markAll, true);
  // Scripts that build their own tables (the format explorer) run on DOMContentLoaded.
  document.addEventListener("DOMContentLoaded", markAll);
  window.addEventListener("load", markAll);
  markAll();
})();

// A lone claim's verdict is a tip after its sentence, shown while its mark has focus (a tap on a phone):
// under a long sentence whose mark sits low in the window the tip would be below it, so bring it in.
(function () {
  "use strict";
  document.addEventListener("focusin", (e) => {
    const mark = e.target instanceof Element && e.target.closest("p.amp-claim--lone .amp-claim-mark");
    const tip = mark && mark.parentElement.querySelector(".amp-claim-verdict");
    if (!tip) return;
    const r = tip.getBoundingClientRect();
    const header = document.querySelector(".md-header");
    const top = (header ? header.getBoundingClientRect().bottom : 0) + 8;
    const below = r.bottom + 8 - window.innerHeight;
    if (below > 0) window.scrollBy({ top: Math.ceil(below), behavior: "instant" });
    else if (r.top < top) window.scrollBy({ top: Math.floor(r.top - top), behavior: "instant" });
  });
})();
