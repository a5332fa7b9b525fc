"""REST tools built from an OpenAPI document, over HTTP with httpx."""

from toolrag.tools.rest.spec import AuthConfig, OpenAPIToolSpec, RestAPIConfig, load_rest_configs

__all__ = ["AuthConfig", "OpenAPIToolSpec", "RestAPIConfig", "load_rest_configs"]
