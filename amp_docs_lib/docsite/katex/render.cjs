// Render TeX to HTML with the vendored KaTeX, for the site build (amp_docs_lib/docsite/math_render.py).
// stdin: a JSON list of [tex, displayMode]; stdout: a JSON list of {html} or {error}, in the same order.
"use strict";
const katex = require("./katex.min.js");

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const results = JSON.parse(input).map(([tex, displayMode]) => {
    try {
      // HTML for the eye and KaTeX's hidden MathML copy for screen readers.
      return { html: katex.renderToString(tex, { displayMode, output: "htmlAndMathml", throwOnError: true }) };
    } catch (e) {
      return { error: String(e.message || e) };
    }
  });
  process.stdout.write(JSON.stringify(results));
});
