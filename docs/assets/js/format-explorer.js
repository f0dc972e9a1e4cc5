// Format explorer: encode a number into the low-precision formats of the Formats chapter,
// or flip bits and read the value. Plain JavaScript, no requests, no dependencies.
//
// The rounding follows amp_docs_lib.formats (the library's registry), which casts with the
// storage library of each format:
//   * every format is first rounded to FP32, as torch's and ml_dtypes' casts from float64 do
//     (a double rounding), then to the format (round to nearest, ties to even);
//   * what a cast does beyond the range is what this build's libraries do, measured by the
//     Formats chapter (formats.cast_rules) and passed in the explorer's data-cast-rules attribute:
//     torch's E4M3FN cast saturates to +-448 in recent torch and gave NaN before
//     (pytorch/pytorch#178817); the FNUZ formats give their one NaN, 0x80; the defaults below
//     (inf for IEEE formats, saturation otherwise) apply only without that attribute;
//   * FNUZ formats (E4M3FNUZ, E5M2FNUZ) have no -0: a negative value that rounds to zero is +0;
//   * E8M0 (torch float8_e8m0fnu) ignores the sign, rounds the FP32 exponent to nearest with
//     ties to even on the hidden bit (so 1.5 -> 2), maps infinity, NaN and overflow to NaN (0xFF);
//   * FP6 and FP4 (ml_dtypes) saturate to their largest value and turn NaN into -0;
//   * TF32 rounds the FP32 value to 10 mantissa bits (ties to even), a model: kernels may truncate
//     or round ties away (see the Formats chapter); inf and NaN keep their class.
// tests/test_browser.py checks this file against amp_docs_lib.formats.decode.
(function () {
  "use strict";

  // name, exponent bits, mantissa bits, bias, family, signed, NaN pattern, pre-round to FP32
  const SPECS = [
    ["FP32", 8, 23, 127, "ieee", true, 0x7FC00000, true],
    ["TF32", 8, 10, 127, "ieee", true, 0x3FE01, true],
    ["FP16", 5, 10, 15, "ieee", true, 0x7E00, true],
    ["BF16", 8, 7, 127, "ieee", true, 0x7FC0, true],
    ["FP8 E4M3FN", 4, 3, 7, "fn", true, 0x7F, true],
    ["FP8 E5M2", 5, 2, 15, "ieee", true, 0x7F, true],
    ["FP8 E4M3FNUZ", 4, 3, 8, "fnuz", true, 0x80, true],
    ["FP8 E5M2FNUZ", 5, 2, 16, "fnuz", true, 0x80, true],
    ["E8M0", 8, 0, 127, "e8m0", false, 0xFF, true],
    ["FP6 E2M3", 2, 3, 1, "finite", true, 0x20, true],
    ["FP6 E3M2", 3, 2, 3, "finite", true, 0x20, true],
    ["FP4 E2M1", 2, 1, 1, "finite", true, 0x8, true],
  ];
  const P2 = (k) => Math.pow(2, k);

  const FORMATS = {};
  for (const [name, E, M, bias, family, signed, nanBits, preRound] of SPECS) {
    const emaxField = family === "ieee" ? P2(E) - 2 : P2(E) - 1;
    const topMantissa = family === "fn" ? P2(M) - 2 : P2(M) - 1;
    FORMATS[name] = {
      name, E, M, bias, family, signed, nanBits, preRound,
      totalBits: (signed ? 1 : 0) + E + M,
      emin: 1 - bias,
      max: family === "e8m0" ? P2(P2(E) - 2 - bias) : (1 + topMantissa / P2(M)) * P2(emaxField - bias),
      maxBits: family === "e8m0" ? P2(E) - 2 : emaxField * P2(M) + topMantissa,
      // beyond the largest finite value / infinity: "inf", "saturate" or "nan" (see setCastRules)
      overflow: family === "ieee" ? "inf" : family === "fnuz" ? "nan" : "saturate",
      infinity: family === "ieee" ? "inf" : family === "fnuz" ? "nan" : "saturate",
    };
  }

  // The build's measured cast rules: {"FP8 E4M3FN": {"overflow": "saturate", "infinity": "saturate"}, ...}
  function setCastRules(rules) {
    for (const [name, r] of Object.entries(rules || {})) {
      if (!FORMATS[name]) continue;
      for (const k of ["overflow", "infinity"])
        if (["inf", "saturate", "nan"].includes(r[k])) FORMATS[name][k] = r[k];
    }
  }

  function fmt(name) {
    const f = FORMATS[name];
    if (!f) throw new Error(`unknown format ${name}; valid: ${Object.keys(FORMATS).join(", ")}`);
    return f;
  }

  function floorLog2(a) { // exact floor(log2(a)) for a finite a > 0
    let e = Math.floor(Math.log2(a));
    if (P2(e) > a) e -= 1;
    if (P2(e + 1) <= a) e += 1;
    return e;
  }

  const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
  function fp32Bits(x) { f32[0] = x; return u32[0]; }

  function roundMagnitude(a, f) { // round a >= 0 to the format's grid, unbounded above
    if (a === 0) return 0;
    const e = Math.max(floorLog2(a), f.emin);
    const q = P2(e - f.M);
    const n = a / q, lo = Math.floor(n), d = n - lo;
    const r = d > 0.5 || (d === 0.5 && lo % 2 === 1) ? lo + 1 : lo;
    return r * q;
  }

  function magnitudeBits(v, f) { // bits (without sign) of a representable magnitude v
    if (v === 0) return 0;
    const e = floorLog2(v);
    if (e < f.emin) return v / P2(f.emin - f.M);
    return (e + f.bias) * P2(f.M) + (v / P2(e) - 1) * P2(f.M);
  }

  function encodeE8M0(x) {
    const b = fp32Bits(x);
    let e = (b >>> 23) & 0xFF;
    if (e === 0xFF) return 0xFF;
    const g = (b & 0x400000) !== 0, r = (b & 0x200000) !== 0, s = (b & 0x1FFFFF) !== 0;
    if (g && (r || s || e > 0)) e += 1;
    return e;
  }

  // Round x into format `name`; return the bit pattern as a number (not a signed int32).
  function encode(x, name) {
    const f = fmt(name);
    x = Number(x);
    if (f.preRound) x = Math.fround(x);
    if (f.family === "e8m0") return encodeE8M0(x);
    if (Number.isNaN(x)) return f.nanBits;
    const sign = x < 0 || Object.is(x, -0) ? 1 : 0;
    const signBit = sign * P2(f.E + f.M);
    const a = Math.abs(x);
    const r = a === Infinity ? Infinity : roundMagnitude(a, f);
    if (r > f.max) {
      const rule = a === Infinity ? f.infinity : f.overflow;
      if (rule === "inf") return signBit + (P2(f.E) - 1) * P2(f.M);
      if (rule === "nan") return f.family === "fnuz" ? f.nanBits : signBit + f.nanBits;
      return signBit + f.maxBits; // saturate
    }
    if (r === 0 && f.family === "fnuz") return 0; // no -0: the pattern is NaN
    return signBit + magnitudeBits(r, f);
  }

  // Take a bit pattern apart and give the value the format's definition assigns to it.
  function decode(bits, name) {
    const f = fmt(name);
    if (!Number.isInteger(bits) || bits < 0 || bits >= P2(f.totalBits))
      throw new Error(`bits must be an integer in [0, 2^${f.totalBits}) for ${name}`);
    const mField = bits % P2(f.M);
    const eField = Math.floor(bits / P2(f.M)) % P2(f.E);
    const sign = f.signed ? Math.floor(bits / P2(f.E + f.M)) % 2 : 0;
    const allE = P2(f.E) - 1, allM = P2(f.M) - 1;
    let cls;
    if (f.family === "e8m0") cls = eField === allE ? "nan" : "normal";
    else if (f.family === "fnuz" && bits === f.nanBits) cls = "nan";
    else if (f.family === "ieee" && eField === allE) cls = mField === 0 ? "inf" : "nan";
    else if (f.family === "fn" && eField === allE && mField === allM) cls = "nan";
    else if (eField === 0) cls = mField === 0 ? "zero" : "subnormal";
    else cls = "normal";
    const s = sign ? -1 : 1;
    let value;
    if (cls === "nan") value = NaN;
    else if (cls === "inf") value = s * Infinity;
    else if (f.family === "e8m0") value = P2(eField - f.bias);
    else if (eField === 0) value = s * (mField / P2(f.M)) * P2(1 - f.bias);
    else value = s * (1 + mField / P2(f.M)) * P2(eField - f.bias);
    const exponent = cls === "nan" || cls === "inf" ? null
      : (f.family !== "e8m0" && eField === 0 ? 1 - f.bias : eField - f.bias);
    return { format: name, bits, sign, exponentField: eField, mantissaField: mField, cls, value, exponent };
  }

  function isFiniteClass(c) { return c !== "nan" && c !== "inf"; }

  // The representable values just below and above the pattern `bits` (null where none).
  function neighbours(bits, name) {
    const f = fmt(name);
    const d = decode(bits, name);
    if (!isFiniteClass(d.cls)) return { below: null, above: null };
    const signBit = f.signed ? P2(f.E + f.M) : 0;
    const mag = f.signed ? bits % signBit : bits;
    const valueOf = (m) => {
      if (m < 0 || m >= (f.signed ? signBit : P2(f.totalBits))) return null;
      const n = decode(m, name);
      return isFiniteClass(n.cls) ? n.value : null;
    };
    if (f.family === "e8m0") return { below: valueOf(mag - 1), above: valueOf(mag + 1) };
    const up = valueOf(mag + 1), down = mag > 0 ? valueOf(mag - 1) : (f.signed ? -valueOf(1) : null);
    if (d.sign === 0) return { below: down, above: up };
    return { below: up === null ? null : -up, above: down === null ? null : -down };
  }

  function analyse(x, name) { // everything the widget shows for one typed number
    const bits = encode(x, name);
    const d = decode(bits, name);
    const err = Number.isFinite(d.value) && Number.isFinite(x) ? d.value - x : (d.value === x ? 0 : NaN);
    const rel = x !== 0 && Number.isFinite(err) ? Math.abs(err) / Math.abs(x) : (err === 0 ? 0 : NaN);
    return Object.assign(d, neighbours(bits, name), { input: x, error: err, relError: rel });
  }

  // ---- the widget -------------------------------------------------------------------------
  function fieldSpans(bits, f) {
    const raw = bits.toString(2).padStart(f.totalBits, "0");
    const kinds = [];
    for (let i = 0; i < f.totalBits; i++) {
      const j = f.signed ? i : i + 1; // position as if there were a sign bit
      kinds.push(j === 0 ? "s" : j <= f.E ? "e" : "m");
    }
    return [...raw].map((c, i) => `<button type="button" class="amp-fx-bit amp-fx-bit--${kinds[i]}" ` +
      `data-pos="${f.totalBits - 1 - i}" title="flip this bit">${c}</button>`).join("");
  }

  function show(v) { // a stored value: exact (the shortest decimal that round-trips)
    if (v === null || v === undefined) return "n/a";
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "inf";
    if (v === -Infinity) return "-inf";
    if (Object.is(v, -0)) return "-0";
    return String(v);
  }

  function showError(v) { // an error: 4 significant digits are all a reader compares
    if (v === null || v === undefined || !Number.isFinite(v) || v === 0) return show(v);
    const a = Math.abs(v);
    return a >= 1e-4 && a < 1e6 ? String(Number(v.toPrecision(4))) : v.toExponential(3);
  }

  function hex(bits, f) { return "0x" + bits.toString(16).toUpperCase().padStart(Math.ceil(f.totalBits / 4), "0"); }

  function renderRow(tr, x, name, bits) {
    const f = FORMATS[name];
    const a = bits === undefined ? analyse(x, name) : Object.assign(decode(bits, name), neighbours(bits, name));
    if (bits !== undefined) {
      a.error = Number.isFinite(a.value) && Number.isFinite(x) ? a.value - x : NaN;
      a.relError = x !== 0 && Number.isFinite(a.error) ? Math.abs(a.error) / Math.abs(x) : NaN;
    }
    tr.dataset.bits = String(a.bits);
    // What a reader looks for first (stored value, error) comes first; the bits follow.
    tr.innerHTML = `<td>${name}</td><td class="amp-fx-value">${show(a.value)}</td>` +
      `<td>${showError(a.error)}</td><td>${showError(a.relError)}</td>` +
      `<td class="amp-fx-bits">${fieldSpans(a.bits, f)}</td><td><code>${hex(a.bits, f)}</code></td>` +
      `<td>${a.cls}</td><td>${show(a.below)}</td><td>${show(a.above)}</td>`;
    tr.classList.toggle("amp-fx-row--flipped", bits !== undefined);
  }

  function mount(root) {
    if (root.dataset.castRules) setCastRules(JSON.parse(root.dataset.castRules));
    const names = Object.keys(FORMATS);
    root.innerHTML =
      `<label class="amp-fx-label">Number: <input class="amp-fx-input" type="text" inputmode="decimal" ` +
      `value="${root.dataset.value || "0.1"}" aria-label="number to encode"></label> ` +
      `<span class="amp-fx-hint">type a number (1e-8, -3.5, inf, nan) or click a bit to flip it</span>` +
      `<div class="amp-fx-scroll"><table class="amp-table amp-fx-table"><thead><tr><th>format</th>` +
      `<th>stored value</th><th>rounding error</th><th>relative error</th>` +
      `<th>bits (<span class="amp-fx-key--s">sign</span> <span class="amp-fx-key--e">exponent</span> ` +
      `<span class="amp-fx-key--m">mantissa</span>)</th><th>hex</th><th>class</th>` +
      `<th>neighbour below</th><th>neighbour above</th>` +
`</tr></thead><tbody>${names.map((n) => `<tr data-format="${n}"></tr>`).join("")}</tbody></table></div>`;
    const input = root.querySelector(".amp-fx-input");
    const parse = () => {
      const t = input.value.trim().toLowerCase().replace(/^\+/, "");
      if (t === "nan") return NaN;
      if (t === "inf" || t === "infinity") return Infinity;
      if (t === "-inf" || t === "-infinity") return -Infinity;
      return t === "" || !/^-?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/.test(t) ? null : Number(t);
    };
    const update = () => {
      const x = parse();
      input.classList.toggle("amp-fx-input--bad", x === null);
      if (x === null) return;
      root.querySelectorAll("tbody tr").forEach((tr) => renderRow(tr, x, tr.dataset.format));
    };
    input.addEventListener("input", update);
    root.addEventListener("click", (ev) => {
      const btn = ev.target.closest(".amp-fx-bit");
      if (!btn) return;
      const tr = btn.closest("tr");
      const bits = Number(tr.dataset.bits);
      const bit = P2(Number(btn.dataset.pos));
      const flipped = Math.floor(bits / bit) % 2 ? bits - bit : bits + bit;
      const x = parse();
      renderRow(tr, x === null ? NaN : x, tr.dataset.format, flipped);
    });
    update();
  }

  window.AmpFormatExplorer = { formats: FORMATS, encode, decode, neighbours, analyse, mount, setCastRules };
  const mountAll = () => document.querySelectorAll(".amp-format-explorer:not([data-mounted])").forEach((el) => {
    el.dataset.mounted = "1";
    mount(el);
  });
  if (typeof document$ !== "undefined") document$.subscribe(mountAll); // Material's instant navigation
  else if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
