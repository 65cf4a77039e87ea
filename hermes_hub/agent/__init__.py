"""The agent: models (``providers``) and, later, the loop that lets a model call the catalog's tools."""
