"""The plan tests reuse the resolver's fixtures (real recipes, environment builder)."""
from tests.resolve.conftest import envmaker, real_recipes  # noqa: F401
