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
// Material's instant navigation swaps pages without a reload: typeset the new page. The first
// emission is the page load itself, which MathJax typesets on its own (typesetting it a second
// time would clear the CommonHTML glyph styles of the first pass and leave the math blank).
if (typeof document$ !== "undefined") {
  let firstPage = true;
  document$.subscribe(() => {
    if (firstPage) {
      firstPage = false;
      return;
    }
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(() => {
        MathJax.typesetClear();
        MathJax.texReset();
        return MathJax.typesetPromise();
      });
    }
  });
}
