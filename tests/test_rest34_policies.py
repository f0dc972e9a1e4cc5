"""FSDP1/FSDP2 mixed-precision policy fields and the installed reduce_dtype documentation (issue 34, finding 16)."""

from dataclasses import dataclass

import pytest
from torch.distributed.fsdp import MixedPrecision, MixedPrecisionPolicy

from amp_docs_lib.distributed import policies


def test_policy_fields_read_from_both_classes():
    fields = policies.policy_fields()
    fsdp1 = set(fields.loc[fields["policy"] == "FSDP1 MixedPrecision", "field"])
    fsdp2 = set(fields.loc[fields["policy"] == "FSDP2 MixedPrecisionPolicy", "field"])
    assert {"buffer_dtype", "keep_low_precision_grads", "cast_root_forward_inputs"} <= fsdp1
    assert {"param_dtype", "reduce_dtype"} <= fsdp2
    assert not any(f.startswith("_") for f in fsdp1 | fsdp2)  # private fields are not policy


def test_buffer_fields_finds_a_buffer_field_only_where_there_is_one():
    fields = policies.policy_fields()
    assert policies.buffer_fields(fields) == {
        "FSDP1 MixedPrecision": ["buffer_dtype"],
        "FSDP2 MixedPrecisionPolicy": [],
    }


@dataclass
class _WithNote:
    """A policy.

    Attributes:
        reduce_dtype (Optional[torch.dtype]): Reduces in it.
            More text.

            .. versionchanged:: 2.15
                Now different.
                Second line.
        output_dtype (Optional[torch.dtype]): Not this one.
    """

    reduce_dtype: object = None
    output_dtype: object = None


def test_attribute_doc_stops_at_the_next_attribute_and_keeps_its_note():
    doc = policies.attribute_doc(_WithNote, "reduce_dtype")
    assert doc.startswith("reduce_dtype (Optional[torch.dtype]): Reduces in it.")
    assert "output_dtype" not in doc
    assert policies.version_note(doc, "2.15") == "Now different. Second line."
    assert policies.version_note(doc, "2.16") is None


def test_attribute_doc_of_installed_torch():
    fsdp1 = policies.attribute_doc(MixedPrecision, "reduce_dtype")
    assert "param_dtype" in fsdp1 and "buffer_dtype" not in fsdp1
    assert policies.attribute_doc(MixedPrecisionPolicy, "reduce_dtype").startswith("reduce_dtype (")
    with pytest.raises(ValueError, match="no attribute"):
        policies.attribute_doc(MixedPrecisionPolicy, "buffer_dtype")


def test_a_policy_with_a_buffer_field_is_reported(monkeypatch):
    # the false variant of the page's claim: an FSDP2 policy that did cast buffers
    @dataclass
    class PolicyWithBuffers:
        param_dtype: object = None
        buffer_dtype: object = None

    monkeypatch.setattr(policies, "_policy_classes", lambda: {"FSDP2 MixedPrecisionPolicy": PolicyWithBuffers})
    assert policies.buffer_fields(policies.policy_fields()) == {"FSDP2 MixedPrecisionPolicy": ["buffer_dtype"]}
