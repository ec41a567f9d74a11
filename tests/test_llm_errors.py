"""The LLM errors are part of the documented hierarchy and carry no secrets."""

from __future__ import annotations

from prdigest.core import errors


def test_every_llm_error_is_drawn_in_the_module_docstring() -> None:
    doc = errors.__doc__ or ""
    for name in ("LLMError", "LLMTimeoutError", "LLMUnavailableError", "LLMResponseError"):
        assert issubclass(getattr(errors, name), errors.PrdigestError)
        assert name in doc
    assert "LLMBudgetError" in doc


def test_llm_error_messages_name_model_and_pr() -> None:
    error = errors.LLMResponseError("reply has no choice", model="m-1", pr="o/r#5", status=None)
    assert str(error) == "reply has no choice (m-1, o/r#5)" and error.exit_code == 9
    budget = errors.LLMBudgetError("spent", spent=10, limit=5)
    assert budget.spent == 10 and budget.limit == 5
