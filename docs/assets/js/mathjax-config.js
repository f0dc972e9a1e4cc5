// MathJax 3 configuration. Loaded before the locally served tex-svg.js.
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
    if (window.MathJax && MathJax.typesetPromise) {
      MathJax.startup.output.clearCache();
      MathJax.typesetClear();
      MathJax.texReset();
      MathJax.typesetPromise();
    }
  });
}
