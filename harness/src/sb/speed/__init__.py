"""`sb speed`: serving speed and honest capacity of an OpenAI-compatible endpoint."""
