#!/usr/bin/env bash
# Vendor KaTeX (npm package `katex`, MIT) so the site renders math at build time, offline, with no npm
# install in the build or in CI: the build runs the vendored katex.min.js with the machine's node
# (amp_docs_lib/docsite/math.py); pages with math link the vendored stylesheet and its WOFF2 fonts.
# Run from the repository root to update:  bash scripts/vendor_katex.sh 0.19.1
set -euo pipefail
version="${1:?usage: vendor_katex.sh VERSION}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "katex@$version" >/dev/null && tar xzf "katex-$version.tgz")
dist="$tmp/package/dist"

build=amp_docs_lib/docsite/katex      # used by the build only, never served
served=docs/assets/katex              # served to pages with math
rm -rf "$build/katex.min.js" "$served"
mkdir -p "$build" "$served/fonts"
cp "$dist/katex.min.js" "$build/"
cp "$tmp/package/LICENSE" "$build/LICENSE"
cp "$tmp/package/LICENSE" "$served/LICENSE"
cp "$dist"/fonts/*.woff2 "$served/fonts/"
# Every browser the site supports reads WOFF2: drop the WOFF and TTF fallbacks from each @font-face,
# so the stylesheet names only files that are served.
sed -E 's/,url\(fonts\/[A-Za-z0-9_-]+\.(woff|ttf)\) format\("(woff|truetype)"\)//g' "$dist/katex.min.css" \
  > "$served/katex.min.css"
if grep -qE '\.(woff|ttf)\)' "$served/katex.min.css"; then
  echo "vendor_katex.sh: a WOFF/TTF fallback is left in katex.min.css" >&2
  exit 1
fi
echo "$version" > "$build/VERSION"
echo "KaTeX $version vendored: $build/katex.min.js, $served/"
