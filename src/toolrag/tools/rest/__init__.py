"""REST tools built from an OpenAPI document, over HTTP with httpx."""
