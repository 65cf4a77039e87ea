"""The agent: the loop that lets a model call the catalog's tools, its profiles, questions and summaries.
Its models come from ``hermes_hub.infra.models``, which memory and ``check`` use as well."""
