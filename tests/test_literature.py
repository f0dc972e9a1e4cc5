"""The literature registry: bibliography identifiers, link targets, and verdicts computed by calls."""

import ast
import inspect
import re
from pathlib import Path

import pytest
import torch

from amp_docs_lib import literature as L
from amp_docs_lib.core.chapters import chapter_anchors, heading_anchor
from amp_docs_lib.literature import verdicts

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- bibliography
def test_arxiv_ids_and_dois_are_well_formed_and_unique():
    ids = L.bibliography.identifiers()
    assert len(ids["arxiv"]) >= 8
    for kind, ok in (("arxiv", L.bibliography.arxiv_id_ok), ("doi", L.bibliography.DOI.match)):
        values = [v for _, v in ids[kind]]
        bad = [(k, v) for k, v in ids[kind] if not ok(v)]
        assert not bad, f"malformed {kind}: {bad}"
        assert len(values) == len(set(values)), f"duplicate {kind}: {values}"


def test_identifier_patterns_reject_malformed_ids():
    assert L.bibliography.arxiv_id_ok("1710.03740") and L.bibliography.arxiv_id_ok("2310.10537v2") and L.bibliography.arxiv_id_ok("1412.6980")
    for bad in ("1710.0374", "arXiv:1710.03740", "17100.3740", "1710.03740 ", "1713.03740", "1412.69801", 1710.0374):
        assert not L.bibliography.arxiv_id_ok(bad), bad
    assert L.bibliography.DOI.match("10.14778/3611540.3611569")
    assert not L.bibliography.DOI.match("https://doi.org/10.1/x") and not L.bibliography.DOI.match("10.1/x")


def test_bib_arxiv_urls_agree_with_eprints():
    data = L.load_bibliography()
    for key, e in data.entries.items():
        if "eprint" in e.fields and "url" in e.fields:
            assert e.fields["url"].endswith(e.fields["eprint"]), key


def test_every_claim_cites_a_bib_entry_and_every_entry_is_cited():
    keys = set(L.load_bibliography().entries)
    cited = {c.source for c in L.CLAIMS}
    assert cited <= keys, cited - keys
    chapters = "".join(p.read_text() for p in (ROOT / "docs/chapters").glob("*.md"))
    in_text = set(re.findall(r"\[([a-z0-9_]+)[\],]", chapters))
    assert keys <= cited | in_text, keys - cited - in_text


def test_public_sources_only():
    """No private notes: no bibliography entry and no chapter text points at the project's seed notes."""
    bib = L.bibliography.BIB_PATH.read_text()
    assert "seed" not in bib.lower() and "shared/" not in bib
    for name in ("literature", "fp8"):
        text = (ROOT / f"docs/chapters/{name}.md").read_text()
        assert "seed_" not in text and "seed note" not in text.lower(), name
    for key, e in L.load_bibliography().entries.items():
        note = e.fields.get("note", "")
        assert "corpus" not in note and "amp_docs_lib" not in note and "authors could" not in note, key


def test_truncated_author_lists_say_et_al():
    text = L.bibliography.bibliography(keys=["nvidia2025nvfp4"])
    assert text.count(", et al.") == 1 and "others" not in text


def test_format_entry_has_authors_title_venue_year_and_arxiv_link():
    text = L.bibliography.bibliography(keys=["micikevicius2022fp8"])
    # each entry starts with its anchor (bibliography.ref_anchor), which citations link to
    assert text.startswith('- <span id="ref-micikevicius2022fp8"></span>**[micikevicius2022fp8]** Paulius Micikevicius, Dusan Stosic')
    assert "*FP8 Formats for Deep Learning*" in text and "2022." in text
    assert "arXiv:[2209.05433](https://arxiv.org/abs/2209.05433)" in text
    assert "{" not in text and "}" not in text
    zero = L.bibliography.bibliography(keys=["rajbhandari2020zero"])
    assert "Samyam Rajbhandari, Jeff Rasley, Olatunji Ruwase, Yuxiong He." in zero and "et al" not in zero
    fsdp = L.bibliography.bibliography(keys=["zhao2023fsdp"])
    assert "et al." in fsdp and "Proceedings of the VLDB Endowment 16(12)" in fsdp


def test_bibliography_rejects_unknown_keys():
    with pytest.raises(ValueError, match="nosuchkey"):
        L.bibliography.bibliography(keys=["nosuchkey"])
    with pytest.raises(ValueError, match="no bibliography"):
        L.load_bibliography("/nonexistent.bib")


# --------------------------------------------------------------------------- link targets
@pytest.mark.parametrize("heading, anchor", [
    ("Lost updates and FP32 master weights", "lost-updates-and-fp32-master-weights"),  # gradscaler.md links here
    ("torch's defaults, read from the installed code", "torchs-defaults-read-from-the-installed-code"),
    ("`torch.compile` and the profiler", "torchcompile-and-the-profiler"),
    ("1. Locating the first inf/NaN: hooks against `detect_anomaly`",
     "1-locating-the-first-infnan-hooks-against-detect_anomaly"),
])
def test_heading_anchor_matches_mkdocs_toc(heading, anchor):
    assert heading_anchor(heading) == anchor


def test_existing_link_in_gradscaler_resolves_with_chapter_anchors():
    assert "lost-updates-and-fp32-master-weights" in chapter_anchors("chapters/formats.md")


@pytest.mark.parametrize("claim", L.CLAIMS, ids=lambda c: c.key)
def test_every_row_links_to_an_existing_heading(claim):
    name, anchor = L.registry.split_test(claim.test)
    assert anchor in chapter_anchors(f"chapters/{name}.md"), claim.test
    assert L.registry.site_url(claim.test) == f"../{name}/#{anchor}"


def test_chapter_prose_links_resolve():
    text = (ROOT / "docs/chapters/literature.md").read_text()
    links = re.findall(r"\]\(([a-z_]+)\.md(?:#([a-z0-9_-]+))?\)", text)
    assert links
    for name, anchor in links:
        assert (ROOT / f"docs/chapters/{name}.md").exists(), name
        if anchor:
            assert anchor in chapter_anchors(f"chapters/{name}.md"), f"{name}.md#{anchor}"


def test_split_test_rejects_bad_targets():
    for bad in ("formats.md#x", "chapters/formats.md", "chapters/formats.md#Bad Anchor", 3):
        with pytest.raises(ValueError):
            L.registry.split_test(bad)


# --------------------------------------------------------------------------- verdicts
def test_keys_unique_and_enough_rows():
    keys = [c.key for c in L.CLAIMS]
    assert len(keys) == len(set(keys)) and 12 <= len(keys) <= 45


def test_no_literal_verdicts_in_the_module():
    """Verdicts come from judged(<computed bool>), needs(...) or needs_scale(...), never a literal."""
    tree = ast.parse(inspect.getsource(L.verdicts) + inspect.getsource(L.registry))
    literal_status = {"HOLDS", "DOES_NOT_HOLD", "HOLDS_HERE", "NOT_HERE"}
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name == "Verdict" and fn.name != "judged":
                status = node.args[0] if node.args else None
                assert not isinstance(status, ast.Constant), f"{fn.name}: literal verdict"
                assert getattr(status, "id", None) not in literal_status, f"{fn.name}: literal verdict"
            if name == "judged":
                assert node.args and not isinstance(node.args[0], ast.Constant), f"{fn.name}: judged(constant)"


@pytest.mark.slow
@pytest.mark.parametrize("claim", L.CLAIMS, ids=lambda c: c.key)
def test_every_verdict_function_calls_something(claim):
    """A verdict function is not a constant: its code calls a library or torch function."""
    src = inspect.getsource(claim.verdict_fn)
    calls = [n for n in ast.walk(ast.parse(src.strip().rstrip(","))) if isinstance(n, ast.Call)]
    assert calls, claim.key
    v = claim.verdict()
    assert v.status in L.verdicts.VERDICTS and (v.reason if v.status == L.NOT_TESTABLE else v.measured)


def test_verdict_follows_the_measurement(monkeypatch):
    """Changing what a verdict function measures changes the verdict."""
    from amp_docs_lib.amp import grad_scaler

    assert L.get_claim("pytorch-gradscaler-defaults").verdict().status == L.HOLDS
    monkeypatch.setattr(grad_scaler, "torch_gradscaler_defaults",
                        lambda: {"init_scale": 2.0**10, "growth_factor": 2.0, "backoff_factor": 0.5,
                                 "growth_interval": 2000})
    assert L.get_claim("pytorch-gradscaler-defaults").verdict().status == L.DOES_NOT_HOLD


def test_zero_example_fails_for_another_accounting(monkeypatch):
    from amp_docs_lib.distributed import memory

    monkeypatch.setitem(memory.PRECISIONS, "bf16_master", dict(memory.PRECISIONS["fp32"]))
    assert L.get_claim("zero-7.5b").verdict().status == L.DOES_NOT_HOLD


def test_not_testable_reason_comes_from_gating(monkeypatch):
    if L.verdicts.gating.requirement_met("cuda"):
        pytest.skip("this machine has a CUDA GPU")
    v = L.get_claim("nvidia-fp16-multiples-of-8").verdict()
    assert v.status == L.NOT_TESTABLE and v.reason.startswith("needs a CUDA GPU")


def test_fp8_training_claims_are_out_of_reach_by_scale_not_by_hardware():
    """FP8 training runs on this CPU (the FP8 chapter does it); what no build reaches is the scale."""
    for key in ("fp8-training-quality", "fishman-long-runs"):
        v = L.get_claim(key).verdict()
        assert v.status == L.NOT_TESTABLE and v.reason.startswith("needs scale"), key


def test_machine_facts_cover_hardware_dependent_claims():
    facts = L.registry.machine_facts()
    assert len(facts) == sum(c.hardware_dependent for c in L.CLAIMS)
    assert all(f.text.startswith("On this machine (") for f in facts)


@pytest.mark.slow
def test_reading_map_rows_and_summary(reading_map):
    df = reading_map
    assert len(df) == len(L.CLAIMS)
    assert set(df["verdict"]) <= set(L.verdicts.VERDICTS)
    s = L.verdict_summary(df)
    assert s["claims"].sum() == len(L.CLAIMS)
    with pytest.raises(ValueError, match="verdict"):
        L.verdict_summary(df.drop(columns="verdict"))
    # n/a cells are None, never NaN
    assert all(v is None or isinstance(v, str) for v in df["why not testable"])
    notes = dict(zip([c.key for c in L.CLAIMS], df["note"]))
    assert notes["deepseek-promotion"] == L.get_claim("deepseek-promotion").note and notes["zero-7.5b"] is None


def test_get_claim_and_verdict_validate():
    with pytest.raises(ValueError, match="unknown claim"):
        L.get_claim("nope")
    with pytest.raises(ValueError, match="unknown verdict"):
        L.Verdict("verified", "x")
    with pytest.raises(ValueError, match="unknown requirement"):
        L.verdicts.needs("sm42x", "x")


# --------------------------------------------------------------------------- new sources
def test_identifiers_include_the_verified_dois():
    dois = dict(L.bibliography.identifiers()["doi"])
    assert dois["zhao2023fsdp"] == "10.14778/3611540.3611569"
    assert dois["rajbhandari2020zero"] == "10.1109/SC41405.2020.00024"
    arxiv = dict(L.bibliography.identifiers()["arxiv"])
    assert arxiv["deepseek2024v3"] == "2412.19437" and arxiv["nvidia2025nvfp4"] == "2509.25149"


@pytest.mark.slow
def test_block_format_verdicts_follow_the_measurement(monkeypatch):
    from amp_docs_lib.fp8 import fine_grained, nvfp4

    for key in ("nvfp4-vs-mxfp4", "nvfp4-amax", "deepseek-fine-grained", "deepseek-promotion", "mx-concrete-formats"):
        assert L.get_claim(key).verdict().status == L.HOLDS, key
    # an accumulator that promotion does not help would make the promotion claim fail
    monkeypatch.setattr(fine_grained, "limited_precision_matmul",
                        lambda a, b, bits=14, promote_every=None, rounding="nearest": (a @ b) * 1.01)
    assert L.get_claim("deepseek-promotion").verdict().status == L.DOES_NOT_HOLD
    # NVFP4 without its E4M3 scale rounding (scale a power of two, as MX) loses the amax bound
    real = nvfp4.nvfp4_quantize
    monkeypatch.setattr(nvfp4, "nvfp4_quantize", lambda x, **k: nvfp4.mx_quantize(x, "FP4 E2M1"))
    assert L.get_claim("nvfp4-amax").verdict().status == L.DOES_NOT_HOLD
    monkeypatch.setattr(nvfp4, "nvfp4_quantize", real)


def test_hardware_rows_are_not_testable_without_their_gpu():
    if not L.verdicts.gating.requirement_met("cuda"):
        v = L.get_claim("nvidia-fp16-multiples-of-8").verdict()
        assert v.status == L.NOT_TESTABLE and v.reason.startswith("needs"), v
    for key in ("deepseek-accumulator", "nvfp4-training", "fp8lm-speed", "fsdp-scaling"):
        assert L.get_claim(key).verdict().status == L.NOT_TESTABLE, key


def test_nvidia_loss_scaling_rows_follow_the_measurement(monkeypatch):
    from amp_docs_lib.amp import underflow

    assert L.get_claim("nvidia-constant-scale").verdict().status == L.HOLDS
    assert L.get_claim("nvidia-dynamic-scaling").verdict().status == L.HOLDS
    # the dynamic-scaling card runs a default GradScaler: one whose default backoff were 0.25 fails it
    real = torch.amp.GradScaler
    monkeypatch.setattr(torch.amp, "GradScaler", lambda device: real(device, backoff_factor=0.25))
    assert L.get_claim("nvidia-dynamic-scaling").verdict().status == L.DOES_NOT_HOLD
    monkeypatch.setattr(torch.amp, "GradScaler", real)
    # gradients larger than FP16's range need a scale below 1; the bound still decides overflow
    monkeypatch.setattr(underflow, "synthetic_gradients", lambda *a, **k: torch.tensor([1e5, 1.0, -2.0]))
    v = L.get_claim("nvidia-constant-scale").verdict()
    assert v.status == L.HOLDS and "0.99 × 65,504 gives 0 infinities in FP16, 1.01 × 65,504 gives 1" in v.measured


# --------------------------------------------------------------------------- falsifiability
@pytest.mark.parametrize("claim", L.CLAIMS, ids=lambda c: c.key)
def test_every_verdict_rejects_a_false_variant_of_its_claim(claim):
    """A claim that holds here must fail when its sentence is made false (false_params)."""
    v = claim.verdict()
    if v.status not in (L.HOLDS, L.HOLDS_HERE):
        assert v.status == L.NOT_TESTABLE, (claim.key, v)
        return
    assert claim.false_params is not None, f"{claim.key}: a claim that holds needs a false variant"
    if "{" in claim.claim:  # a sentence with fields states the false variant too; otherwise the note does
        assert claim.false_text != claim.text
    f = claim.false_verdict()
    assert f.status in (L.DOES_NOT_HOLD, L.NOT_HERE), (claim.key, claim.false_text, f)


def test_every_parametrised_claim_states_its_parameters():
    for c in L.CLAIMS:
        if c.params:
            assert set(c.false_params or {}) <= set(c.params), c.key
            assert "{" not in c.text, c.key
            if c.claim == c.text:  # no field in the sentence: the note must say what is tested
                assert c.note, c.key


def test_registry_check_catches_a_verdict_that_cannot_fail():
    assert L.registry.unfalsifiable() == []
    always = L.LiteratureClaim("tautology", "E4M3 has {bits} bits.", "micikevicius2022fp8", "§3",
                               "chapters/fp8.md#what-the-formats-can-represent",
                               lambda bits: L.verdicts.judged(True, f"{bits} bits"), params={"bits": 8},
                               false_params={"bits": 9})
    no_variant = L.LiteratureClaim("no-variant", "E4M3's largest value is 448.", "micikevicius2022fp8", "§3",
                                   "chapters/fp8.md#what-the-formats-can-represent",
                                   lambda: L.verdicts.judged(torch.finfo(torch.float8_e4m3fn).max == 448, "448"))
    fixed_by_definition = L.LiteratureClaim(
        "definition", "E4M3's largest value is {m:g}.", "micikevicius2022fp8", "§3",
        "chapters/fp8.md#what-the-formats-can-represent",
        lambda m: L.verdicts.judged(torch.finfo(torch.float8_e4m3fn).max == 448, f"claimed {m}"),  # ignores its argument
        params={"m": 448.0}, false_params={"m": 480.0})
    assert L.registry.unfalsifiable((always, no_variant, fixed_by_definition)) == ["tautology", "no-variant", "definition"]


def test_mpt_wording_matches_what_torch_does():
    """F6: the 2048 threshold is where losses *start*; 2^-25, not 2^-24, is where FP16 flushes to zero."""
    w = torch.tensor(1.5, dtype=torch.float16)
    assert (w + (w / 2048)) != w and (w + (w / 3000)) != w  # w = 1.5: both kept, so "always lost at 2048" is false
    assert float(torch.tensor(0.75 * 2.0**-24).half()) == 2.0**-24  # below 2^-24, yet not zero
    assert float(torch.tensor(2.0**-25).half()) == 0.0
    assert L.get_claim("mpt-master-weights").verdict().status == L.HOLDS
    assert L.get_claim("mpt-underflow").verdict().status == L.HOLDS
