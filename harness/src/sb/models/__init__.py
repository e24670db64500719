"""Model adapters: who writes the solution. See docs/models.md."""

from sb.models.base import Attempt, ModelAdapter, ModelOptions, resolve_model

__all__ = ["Attempt", "ModelAdapter", "ModelOptions", "resolve_model"]
