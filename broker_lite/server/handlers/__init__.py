"""One module per API family; each exposes ``handle(context, body) -> response body``."""
