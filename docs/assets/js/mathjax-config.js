// MathJax 3 configuration. Loaded before the locally served tex-chtml.js.
// Handles arithmatex output on Markdown pages (\( \) and \[ \]) and the raw
// $...$ / $$...$$ that nbconvert leaves in executed chapters.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"], ["$", "$"]],
    displayMath: [["\\[", "\\]"], ["$$", "$$"]],
    processEscapes: true,
  },
  options: {
    ignoreHtmlClass: "amp-nomath|highlight|jp-OutputArea-output",
    processHtmlClass: "arithmatex|jp-MarkdownOutput|jp-RenderedMarkdown|amp-claim",
  },
  loader: { load: [] },
};
// Material's instant navigation swaps pages without a reload: typeset again.
if (typeof document$ !== "undefined") {
  document$.subscribe(() => {
    // On the first page load MathJax typesets by itself; wait for its startup before re-typesetting.
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(() => {
        const out = MathJax.startup.output;
        if (out && typeof out.clearCache === "function") out.clearCache();
        MathJax.typesetClear();
        MathJax.texReset();
        return MathJax.typesetPromise();
      });
    }
  });
}
