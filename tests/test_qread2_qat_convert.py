"""QAT's convert step is checked on predictions, not on accuracy alone (issue 34, read 2, finding 8)."""

import pytest
import torch

from amp_docs_lib.quantization import ptq, qat, task


@pytest.fixture(scope="module")
def small_task():
    return task.trained_task(hidden=32, epochs=3)


def test_qat_model_returns_the_fake_quantized_predictions_taken_before_convert(small_task):
    base = ptq._intx_wo(torch.int2, None)
    fq_acc, m, fq_pred = qat.qat_model(small_task, base, epochs=1, with_predictions=True)
    d = small_task.data
    assert fq_pred.shape == d.y_test.shape
    assert float((fq_pred == d.y_test).float().mean()) == pytest.approx(fq_acc)
    with torch.inference_mode():
        converted = m(d.x_test).argmax(1)
    assert int((converted != fq_pred).sum()) <= 1  # convert reproduces the fake-quantized model


def test_qat_table_counts_the_images_convert_changed(small_task):
    t = qat.qat_table(small_task, {"INT8": lambda: ptq._intx_wo(torch.int8, None)}, epochs=1)
    assert 0 <= int(t.loc[0, "test images whose class convert changed"]) <= len(small_task.data.x_test)


def test_load_without_assign_reports_the_copy_error_as_text_not_a_tuple(small_task):
    from amp_docs_lib.quantization import serialization

    q = ptq.quantize_variant(small_task.model, "int8_wo")
    msg = serialization.load_without_assign(q, small_task.model)
    assert msg.startswith("RuntimeError: ")
    assert "('" not in msg and '("' not in msg and not msg.endswith(",)")
